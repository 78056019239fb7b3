// The default writer: sonde's native chunked, compressed log.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "format/native_writer.hpp"
#include "monitor/registry.hpp"
#include "monitor/writers/native_encoding_writer.hpp"
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {

class NativeEventWriter final : public NativeEncodingWriter {
 public:
  // `path`: where the log goes; empty: out_dir/APPLICATION-PID.sonde.
  NativeEventWriter(const Config& config, std::string path)
      : config_(config), path_(std::move(path)) {}

  std::string open(const ProcessInfo& p) override {
    if (std::string err = make_directories(config_.out_dir); !err.empty()) return err;
    if (path_.empty())
      path_ = config_.out_dir + "/" + p.application + "-" + std::to_string(p.pid) + ".sonde";
    sink_ = std::make_unique<format::FileSink>(path_);
    if (!sink_->ok()) return sink_->error();
    writer_ = std::make_unique<format::NativeWriter>(*sink_, native_writer_options(config_));
    if (!writer_->begin()) return writer_->error();
    write_process_meta(*writer_, p, config_);
    return "";
  }

  void flush(bool force) override {
    writer_->flush(force);
    if (force) sink_->sync();
  }
  void close(uint64_t written, uint64_t lost) override { writer_->finish(written, lost); }
  std::string location() const override { return path_; }

 private:
  const Config& config_;
  std::string path_;
  std::unique_ptr<format::FileSink> sink_;
};

}  // namespace

format::NativeWriterOptions native_writer_options(const Config& config) {
  format::NativeWriterOptions options;
  options.codec = config.compression == "zstd"  ? format::native::Codec::kZstd
                  : config.compression == "lz4" ? format::native::Codec::kLz4
                                                : format::native::Codec::kNone;
  options.level = config.compression_level;
  return options;
}

void write_process_meta(format::NativeWriter& w, const ProcessInfo& p, const Config& config) {
  w.meta("sonde.format", "native/" + std::to_string(format::native::kVersion));
  w.meta("host", p.hostname);
  w.meta("application", p.application);
  w.meta("pid", std::to_string(p.pid));
  w.meta("parent_pid", std::to_string(p.parent_pid));
  w.meta("executable", p.executable);
  w.meta("command_line", p.command_line);
  w.meta("timer", p.timer);
  w.meta("start_epoch_ns", std::to_string(p.start_epoch_ns));
  w.meta("policy", config.policy == FullPolicy::kBlock ? "block" : "drop");
}

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
  return std::make_unique<NativeEventWriter>(config, "");
}

std::unique_ptr<EventWriter> make_native_writer_at(const Config& config, std::string path) {
  return std::make_unique<NativeEventWriter>(config, std::move(path));
}

}  // namespace sonde::monitor
