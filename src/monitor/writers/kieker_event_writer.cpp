// Writes a Kieker filesystem log (kieker.map + .dat or .bin files) that
// Kieker's own tools read. Losses and records Kieker does not know go into
// a sonde.meta side file, which Kieker's reader ignores.
#include <fstream>

#include "format/compressed_format.hpp"
#include "format/kieker_log.hpp"
#include "monitor/writers/kieker_records.hpp"
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {

class KiekerEventWriter final : public EventWriter {
 public:
  explicit KiekerEventWriter(const Config& config)
      : config_(config), records_([this](const format::Record& r) { return log_->write(r); }) {}

  std::string open(const ProcessInfo& p) override {
    if (std::string err = make_directories(config_.out_dir); !err.empty()) return err;
    dir_ = config_.out_dir + "/kieker-" + p.application + "-" + std::to_string(p.pid);
    auto mode = config_.writer == WriterKind::kKiekerBin ? format::KiekerLogMode::kBin
                                                         : format::KiekerLogMode::kDat;
    format::KiekerLogWriter::Options options;
    options.mode = mode;
    options.max_entries_per_file = config_.kieker_max_entries_per_file;
    // Validated when the configuration was read.
    format::parse_compression(config_.kieker_compression, &options.compression);
    log_ = std::make_unique<format::KiekerLogWriter>(dir_, options);
    if (log_->failed()) return log_->error();
    process_ = p;
    records_.start(p, p.start_epoch_ns);
    return log_->failed() ? log_->error() : "";
  }
  void operation(const OperationInfo& op) override { records_.operation(op); }
  void thread(const ThreadInfo& t) override { records_.thread(t); }
  void events(uint32_t thread, const DecodedEvent* e, size_t n) override {
    lost_ += records_.events(e, n, thread);
  }
  void record(const format::Record& r) override { records_.record(r); }
  void clock(const Calibration& c) override { records_.clock(c); }
  void loss(uint32_t, uint64_t, std::string_view) override {}  // totals go to sonde.meta
  void flush(bool) override { log_->flush(); }
  void close(uint64_t written, uint64_t lost) override {
    log_->close();
    std::ofstream meta(dir_ + "/sonde.meta");
    meta << "# Written by sonde next to the Kieker log; Kieker's reader ignores this file.\n"
         << "events_written=" << written << "\nevents_lost=" << lost
         << "\nrecords_not_in_kieker_format=" << records_.records_skipped()
         << "\nstrings_altered_for_dat=" << log_->strings_altered()
         << "\nhost=" << process_.hostname << "\napplication=" << process_.application
         << "\npid=" << process_.pid << "\n";
  }
  bool failed() const override { return log_ != nullptr && log_->failed(); }
  std::string error() const override { return log_ != nullptr ? log_->error() : ""; }
  std::string location() const override { return dir_; }
  uint64_t bytes_written() const override { return 0; }
  uint64_t events_lost() const override { return lost_; }

 private:
  const Config& config_;
  KiekerRecords records_;
  std::unique_ptr<format::KiekerLogWriter> log_;
  std::string dir_;
  ProcessInfo process_;
  uint64_t lost_ = 0;
};

}  // namespace

std::unique_ptr<EventWriter> make_kieker_writer(const Config& config) {
  return std::make_unique<KiekerEventWriter>(config);
}

}  // namespace sonde::monitor
