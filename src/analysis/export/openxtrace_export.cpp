#include "analysis/export/openxtrace_export.hpp"

namespace sonde::analysis {
namespace {

// Hands every record to the reconstructor and to the writer's callable
// record buffer.
class Tee final : public format::RecordSink {
 public:
  Tee(format::RecordSink& a, format::RecordSink& b) : a_(a), b_(b) {}
  bool on_record(const format::Record& r) override {
    const bool more_a = a_.on_record(r);
    const bool more_b = b_.on_record(r);
    return more_a && more_b;
  }
  // Flow records only matter to the reconstructor (`a`): let it take them
  // in typed form. Callable records still arrive through on_record.
  format::TypedFlowSink* typed_flow() override { return a_.typed_flow(); }

 private:
  format::RecordSink& a_;
  format::RecordSink& b_;
};

}  // namespace

OpenXtraceExportResult export_openxtrace(const std::string& log_path, std::ostream& out,
                                         const OpenXtraceExportOptions& options) {
  OpenXtraceExportResult result;
  OpenXtraceWriter writer(out, options.writer);
  TraceStitcher stitcher(writer, options.stitching);
  TraceReconstructor reconstructor(stitcher, options.reconstruction);
  Tee tee(reconstructor, writer.callable_records());
  result.read = format::read_log(log_path, tee);
  reconstructor.finish();
  stitcher.finish();
  writer.finish();
  result.reconstruction = reconstructor.stats();
  result.stitching = stitcher.stats();
  result.written = writer.stats();
  result.stream_ok = writer.ok();
  return result;
}

}  // namespace sonde::analysis
