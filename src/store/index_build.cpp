#include "store/index_build.hpp"

#include "format/log_reader.hpp"
#include "store/index_sink.hpp"

namespace sonde::store {

IndexBuildResult build_index_from_log(const std::string& log, const std::string& dir,
                                      const analysis::ReconstructionOptions& options) {
  IndexBuildResult result;
  if (format::detect_log_kind(log) == format::LogKind::kUnknown) {
    result.error =
        log + ": not a log sonde can read (native .sonde, Kieker directory, OPEN.xtrace JSON)";
    return result;
  }
  std::string error;
  std::unique_ptr<TraceIndex> writer = open_trace_index(dir, &error);
  if (!writer) {
    result.error = error;
    return result;
  }
  IndexTraceSink sink(*writer, 0);
  analysis::TraceReconstructor reconstructor(sink, options);
  const format::LogReadStats read = format::read_log(log, reconstructor);
  reconstructor.finish();
  result.records = read.records;
  result.warnings = read.warnings;
  result.traces = sink.valid();
  result.invalid_traces = sink.invalid();
  if (std::string e = writer->finish(); !e.empty()) {
    result.error = e;
  } else if (!read.ok) {
    result.error = read.errors.empty() ? log + ": cannot be read" : read.errors.front();
  }
  return result;
}

}  // namespace sonde::store
