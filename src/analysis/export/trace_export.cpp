#include "analysis/export/trace_export.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "analysis/export/chrome_trace_writer.hpp"
#include "analysis/export/openxtrace_export.hpp"
#include "analysis/export/otlp_json_writer.hpp"
#include "analysis/export/perfetto_trace_writer.hpp"

namespace sonde::analysis {
namespace {

// Counts what passes on to the writer, and finishes it at the end.
class CountingSink final : public StitchedTraceSink {
 public:
  explicit CountingSink(StitchedTraceSink& writer) : writer_(writer) {}
  void on_stitched_trace(const StitchedTrace& trace) override {
    ++traces;
    for (const SubTrace& part : trace.parts) executions += part.trace.executions.size();
    writer_.on_stitched_trace(trace);
  }
  uint64_t traces = 0;
  uint64_t executions = 0;

 private:
  StitchedTraceSink& writer_;
};

// Hands every record to the reconstruction, and sampler records and lost
// markers also to a writer that draws them (Perfetto's counter tracks and
// instants).
template <typename Writer>
class SamplerTee final : public format::RecordSink {
 public:
  SamplerTee(format::RecordSink& traces, Writer& writer) : traces_(traces), writer_(writer) {}
  bool on_record(const format::Record& r) override {
    writer_.on_sampler_record(r);
    return traces_.on_record(r);
  }
  void on_lost_events(const format::LostEvents& lost) override {
    if constexpr (requires { writer_.on_lost_events(lost); }) writer_.on_lost_events(lost);
  }
  format::TypedFlowSink* typed_flow() override { return traces_.typed_flow(); }

 private:
  format::RecordSink& traces_;
  Writer& writer_;
};

// Chrome, OTLP and Perfetto: read, reconstruct, stitch, write; a writer
// that takes sampler records (Perfetto) sees those too.
template <typename Writer>
void export_with(const std::string& input, std::ostream& out, const TraceExportOptions& options,
                 TraceExportResult& result) {
  Writer writer(out);
  CountingSink counting(writer);
  TraceStitcher stitcher(counting, options.stitching);
  TraceReconstructor reconstructor(stitcher, options.reconstruction);
  if constexpr (requires(const format::Record& r) { writer.on_sampler_record(r); }) {
    SamplerTee<Writer> tee(reconstructor, writer);
    result.read = format::read_log(input, tee);
  } else {
    result.read = format::read_log(input, reconstructor);
  }
  reconstructor.finish();
  stitcher.finish();
  writer.finish();
  result.traces = counting.traces;
  result.executions = counting.executions;
  if constexpr (requires { writer.stats().counter_values; }) {
    result.counter_values = writer.stats().counter_values;
  }
  if constexpr (requires { writer.stats().loss_markers; }) {
    result.loss_markers = writer.stats().loss_markers;
  }
  result.stitched_parts = stitcher.stats().parts_stitched;
  result.invalid_traces = reconstructor.stats().invalid_traces;
}

// OPEN.xtrace also carries the log's callable records (SQL, HTTP, ...).
void export_openxtrace_to(const std::string& input, std::ostream& out,
                          const TraceExportOptions& options, TraceExportResult& result) {
  OpenXtraceExportOptions xtrace;
  xtrace.reconstruction = options.reconstruction;
  xtrace.stitching = options.stitching;
  const OpenXtraceExportResult r = export_openxtrace(input, out, xtrace);
  result.read = r.read;
  result.traces = r.written.traces;
  result.callables = r.written.callables;
  result.callable_records_dropped = r.written.callable_records_dropped;
  result.stitched_parts = r.stitching.parts_stitched;
  result.invalid_traces = r.reconstruction.invalid_traces;
  if (!r.stream_ok) result.error = "writing the OPEN.xtrace document failed";
}

}  // namespace

bool parse_trace_format(std::string_view text, TraceFormat* out) {
  for (TraceFormat f : {TraceFormat::kOpenXtrace, TraceFormat::kChrome, TraceFormat::kOtlp,
                        TraceFormat::kPerfetto}) {
    if (text == to_string(f)) {
      *out = f;
      return true;
    }
  }
  return false;
}

std::string_view to_string(TraceFormat format) {
  switch (format) {
    case TraceFormat::kOpenXtrace:
      return "openxtrace";
    case TraceFormat::kChrome:
      return "chrome";
    case TraceFormat::kOtlp:
      return "otlp";
    case TraceFormat::kPerfetto:
      return "perfetto";
  }
  return "?";
}

TraceExportResult export_traces(const std::string& input, TraceFormat format,
                                const std::string& output, const TraceExportOptions& options) {
  TraceExportResult result;
  std::error_code ec;
  if (!std::filesystem::exists(input, ec)) {
    result.read.ok = false;
    result.read.errors.push_back(input + ": no such file or directory");
    return result;  // before creating the output: no empty file left behind
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (!out) {
    result.error = "cannot write '" + output + "': " + std::strerror(errno);
    return result;
  }
  switch (format) {
    case TraceFormat::kOpenXtrace:
      export_openxtrace_to(input, out, options, result);
      break;
    case TraceFormat::kChrome:
      export_with<ChromeTraceWriter>(input, out, options, result);
      break;
    case TraceFormat::kOtlp:
      export_with<OtlpJsonWriter>(input, out, options, result);
      break;
    case TraceFormat::kPerfetto:
      export_with<PerfettoTraceWriter>(input, out, options, result);
      break;
  }
  out.flush();
  if (!out) {
    result.error = "writing '" + output + "' failed: " + std::strerror(errno);
  }
  if (!result.read.ok && result.read.records == 0) {
    out.close();
    std::filesystem::remove(output, ec);  // nothing was readable: leave no empty document
  }
  return result;
}

}  // namespace sonde::analysis
