// Kieker and TCP writers arrive with the Kieker codecs; until then they refuse clearly.
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {
class Unavailable final : public EventWriter {
 public:
  explicit Unavailable(std::string what) : what_(std::move(what)) {}
  std::string open(const ProcessInfo&) override { return what_ + " writer is not available in this build"; }
  void operation(const OperationInfo&) override {}
  void thread(const ThreadInfo&) override {}
  void events(uint32_t, const DecodedEvent*, size_t) override {}
  void record(const format::Record&) override {}
  void clock(const Calibration&) override {}
  void loss(uint32_t, uint64_t, std::string_view) override {}
  void flush(bool) override {}
  void close(uint64_t, uint64_t) override {}
  bool failed() const override { return true; }
  std::string error() const override { return what_; }
  std::string location() const override { return ""; }
  uint64_t bytes_written() const override { return 0; }

 private:
  std::string what_;
};
}  // namespace
std::unique_ptr<EventWriter> make_kieker_writer(const Config&) { return std::make_unique<Unavailable>("kieker"); }
std::unique_ptr<EventWriter> make_tcp_writer(const Config&) { return std::make_unique<Unavailable>("tcp"); }
}  // namespace sonde::monitor
