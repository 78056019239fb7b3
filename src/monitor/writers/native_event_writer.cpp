// The default writer: sonde's native chunked, compressed log.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "format/native_writer.hpp"
#include "monitor/registry.hpp"
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {

class NativeEventWriter final : public EventWriter {
 public:
  explicit NativeEventWriter(const Config& config) : config_(config) {}

  std::string open(const ProcessInfo& p) override {
    if (std::string err = make_directories(config_.out_dir); !err.empty()) return err;
    path_ = config_.out_dir + "/" + p.application + "-" + std::to_string(p.pid) + ".sonde";
    sink_ = std::make_unique<format::FileSink>(path_);
    if (!sink_->ok()) return sink_->error();
    format::NativeWriterOptions options;
    options.codec = config_.compression == "zstd"  ? format::native::Codec::kZstd
                    : config_.compression == "lz4" ? format::native::Codec::kLz4
                                                   : format::native::Codec::kNone;
    options.level = config_.compression_level;
    writer_ = std::make_unique<format::NativeWriter>(*sink_, options);
    if (!writer_->begin()) return writer_->error();
    writer_->meta("sonde.format", "native/" + std::to_string(format::native::kVersion));
    writer_->meta("host", p.hostname);
    writer_->meta("application", p.application);
    writer_->meta("pid", std::to_string(p.pid));
    writer_->meta("parent_pid", std::to_string(p.parent_pid));
    writer_->meta("executable", p.executable);
    writer_->meta("command_line", p.command_line);
    writer_->meta("timer", p.timer);
    writer_->meta("start_epoch_ns", std::to_string(p.start_epoch_ns));
    writer_->meta("policy", config_.policy == FullPolicy::kBlock ? "block" : "drop");
    return "";
  }

  void operation(const OperationInfo& op) override {
    writer_->operation(op.id, op.name, op.kind, op.module, op.address, op.file, op.line);
  }

  void thread(const ThreadInfo& t) override { writer_->thread(t.index, t.os_tid, t.name); }

  void events(uint32_t thread, const DecodedEvent* e, size_t n) override {
    if (n == 0) return;
    using format::native::EventKind;
    // Causes are interned before the block: STRING items may not sit inside it.
    for (size_t i = 0; i < n; ++i) {
      if (e[i].kind == EventKind::kExitFailed)
        cause_ids_[i] = writer_->string_id(cause_text(e[i].cause));
    }
    writer_->begin_events(thread, e[0].time);
    for (size_t i = 0; i < n; ++i) {
      const DecodedEvent& ev = e[i];
      switch (ev.kind) {
        case EventKind::kEnter:
          writer_->enter(ev.time, ev.op);
          break;
        case EventKind::kExit:
          writer_->exit(ev.time, ev.op);
          break;
        case EventKind::kExitFailed:
          writer_->exit_failed(ev.time, ev.op, cause_ids_[i]);
          break;
        case EventKind::kTraceBegin:
          writer_->trace_begin(ev.time, ev.trace_id, ev.parent_trace_id, ev.parent_order_id);
          break;
        case EventKind::kLost:
          writer_->lost(ev.time, ev.lost);
          break;
      }
    }
    writer_->end_events();
    cause_ids_.clear();
    writer_->flush(false);
  }

  void record(const format::Record& r) override { writer_->record(r); }
  void clock(const Calibration& c) override {
    writer_->clock(c.ref_raw(), c.ref_epoch_ns(), c.ns_per_tick());
  }
  void loss(uint32_t thread, uint64_t n, std::string_view reason) override {
    writer_->loss(thread, n, reason);
  }
  void flush(bool force) override {
    writer_->flush(force);
    if (force) sink_->sync();
  }
  void close(uint64_t written, uint64_t lost) override { writer_->finish(written, lost); }
  bool failed() const override { return writer_ != nullptr && writer_->failed(); }
  std::string error() const override { return writer_ != nullptr ? writer_->error() : ""; }
  std::string location() const override { return path_; }
  uint64_t bytes_written() const override { return writer_ ? writer_->bytes_written() : 0; }
  format::NativeWriter* native_encoder() override { return writer_.get(); }

 private:
  const Config& config_;
  std::string path_;
  std::unique_ptr<format::FileSink> sink_;
  std::unique_ptr<format::NativeWriter> writer_;
  std::unordered_map<size_t, uint32_t> cause_ids_;
};

}  // namespace

std::string make_directories(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return "cannot create directory " + partial + ": " + std::strerror(errno);
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return dir + " is not a directory";
  return "";
}

std::unique_ptr<EventWriter> make_native_writer(const Config& config) {
  return std::make_unique<NativeEventWriter>(config);
}

}  // namespace sonde::monitor
