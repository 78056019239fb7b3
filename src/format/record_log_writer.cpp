#include "format/record_log_writer.hpp"

#include "format/byte_sink.hpp"
#include "format/kieker_log.hpp"
#include "format/native_writer.hpp"
#include "format/w3c_ids.hpp"

namespace sonde::format {
namespace {

class NativeLogWriter final : public RecordLogWriter {
 public:
  NativeLogWriter(const std::string& path, NativeWriterOptions options)
      : sink_(path), writer_(sink_, options) {
    if (sink_.ok()) writer_.begin();
  }
  bool on_record(const Record& r) override {
    if (!sink_.ok()) return false;
    writer_.record(r);
    ++written_;
    return writer_.flush(false);
  }
  bool flush() override { return sink_.ok() && writer_.flush(true); }
  size_t buffered_bytes() const override { return writer_.pending_bytes(); }
  std::string finish() override {
    if (!sink_.ok()) return sink_.error();
    writer_.finish(0, 0);
    return writer_.failed() ? writer_.error() : "";
  }

 private:
  FileSink sink_;
  NativeWriter writer_;
};

class KiekerDirectoryWriter final : public RecordLogWriter {
 public:
  KiekerDirectoryWriter(const std::string& dir, KiekerLogMode mode, Compression compression)
      : log_(dir, KiekerLogWriter::Options{mode, KiekerLogWriter::kDefaultMaxEntriesPerFile,
                                           compression}) {}
  bool on_record(const Record& r) override {
    // A trace's W3C context stays out, as the monitor's Kieker writers
    // leave it out: Kieker's tools reject a log with a class they do not
    // know, and the trace and its events are all there.
    if (r.schema != nullptr && r.schema->class_name == w3c::kTraceContextClass) return true;
    if (!log_.write(r)) {
      if (log_.failed()) return false;
      ++rejected_;  // reported by the log writer, not fatal
      return true;
    }
    ++written_;
    return true;
  }
  bool flush() override { return log_.flush(); }
  std::string finish() override {
    log_.close();
    return log_.failed() ? log_.error() : "";
  }
  uint64_t strings_altered() const override { return log_.strings_altered(); }

 private:
  KiekerLogWriter log_;
};

}  // namespace

std::unique_ptr<RecordLogWriter> open_record_log(OutputFormat format, const std::string& path,
                                                 Compression compression,
                                                 NativeWriterOptions native) {
  switch (format) {
    case OutputFormat::kNative:
      return std::make_unique<NativeLogWriter>(path, native);
    case OutputFormat::kKiekerDat:
      return std::make_unique<KiekerDirectoryWriter>(path, KiekerLogMode::kDat, compression);
    case OutputFormat::kKiekerBin:
      return std::make_unique<KiekerDirectoryWriter>(path, KiekerLogMode::kBin, compression);
  }
  return nullptr;
}

}  // namespace sonde::format
