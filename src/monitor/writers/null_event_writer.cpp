// Collects everything and writes nothing: the MooBench "collecting" (C)
// configuration, to measure monitoring cost without I/O.
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {

class NullEventWriter final : public EventWriter {
 public:
  std::string open(const ProcessInfo&) override { return ""; }
  void operation(const OperationInfo&) override {}
  void thread(const ThreadInfo&) override {}
  void events(uint32_t, const DecodedEvent*, size_t) override {}
  void record(const format::Record&) override {}
  void clock(const Calibration&) override {}
  void loss(uint32_t, uint64_t, std::string_view) override {}
  void flush(bool) override {}
  void close(uint64_t, uint64_t) override {}
  bool failed() const override { return false; }
  std::string error() const override { return ""; }
  std::string location() const override { return "(null writer: nothing written)"; }
  uint64_t bytes_written() const override { return 0; }
  bool wants_events() const override { return false; }
};

}  // namespace

std::unique_ptr<EventWriter> make_null_writer() { return std::make_unique<NullEventWriter>(); }

std::unique_ptr<EventWriter> make_event_writer(const Config& config) {
  switch (config.writer) {
    case WriterKind::kNative:
      return make_native_writer(config);
    case WriterKind::kNull:
      return make_null_writer();
    case WriterKind::kKiekerDat:
    case WriterKind::kKiekerBin:
      return make_kieker_writer(config);
    case WriterKind::kTcp:
      return config.tcp_protocol == TcpProtocol::kNative ? make_native_tcp_writer(config)
                                                         : make_kieker_tcp_writer(config);
  }
  return make_null_writer();
}

}  // namespace sonde::monitor
