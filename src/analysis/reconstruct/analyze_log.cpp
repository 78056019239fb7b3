// analyze_log (trace_analysis.hpp) lives apart from TraceAnalysis so that
// code analysing in-memory records does not link the log readers.
#include "analysis/reconstruct/trace_analysis.hpp"

namespace sonde::analysis {

AnalysisResult analyze_log(const std::string& path, const AnalysisOptions& options) {
  TraceAnalysis analysis(options);
  const format::LogKind kind = format::detect_log_kind(path);
  format::LogReadStats read = format::read_log(path, analysis.records());
  AnalysisResult result = analysis.finish();
  result.path = path;
  result.kind = kind;
  result.read = std::move(read);
  return result;
}

}  // namespace sonde::analysis
