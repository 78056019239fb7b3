#include "format/convert.hpp"

#include <memory>

#include "format/byte_sink.hpp"
#include "format/kieker_log.hpp"
#include "format/native_writer.hpp"

namespace sonde::format {
namespace {

class NativeOut final : public RecordSink {
 public:
  explicit NativeOut(const std::string& path) : sink_(path), writer_(sink_) {
    if (sink_.ok()) writer_.begin();
  }
  bool on_record(const Record& r) override {
    writer_.record(r);
    ++written;
    return writer_.flush(false);
  }
  std::string finish() {
    if (!sink_.ok()) return sink_.error();
    writer_.finish(0, 0);
    return writer_.failed() ? writer_.error() : "";
  }
  uint64_t written = 0;

 private:
  FileSink sink_;
  NativeWriter writer_;
};

class KiekerOut final : public RecordSink {
 public:
  KiekerOut(const std::string& dir, KiekerLogMode mode) : log_(dir, mode) {}
  bool on_record(const Record& r) override {
    if (!log_.write(r)) return !log_.failed();  // a rejected record is reported, not fatal
    ++written;
    return true;
  }
  std::string finish() {
    log_.close();
    return log_.failed() ? log_.error() : "";
  }
  uint64_t altered() const { return log_.strings_altered(); }
  uint64_t written = 0;

 private:
  KiekerLogWriter log_;
};

}  // namespace

ConvertResult convert_log(const std::string& input, OutputFormat format,
                          const std::string& output) {
  ConvertResult result;
  if (format == OutputFormat::kNative) {
    NativeOut out(output);
    result.read = read_log(input, out);
    result.error = out.finish();
    result.written = out.written;
  } else {
    KiekerOut out(output,
                  format == OutputFormat::kKiekerBin ? KiekerLogMode::kBin : KiekerLogMode::kDat);
    result.read = read_log(input, out);
    result.error = out.finish();
    result.written = out.written;
    result.strings_altered = out.altered();
  }
  return result;
}

}  // namespace sonde::format
