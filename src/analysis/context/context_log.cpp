#include "analysis/context/context_log.hpp"

#include "analysis/context/context_collector.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"

namespace sonde::analysis {

ContextLog read_context_log(const std::string& path) {
  AnalysisOptions options;
  // Only the reconstructed traces are needed; skip the other collectors' work.
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  TraceAnalysis analysis(options);
  ContextCollector collector;
  analysis.add_sink(collector);
  ContextLog log;
  log.read = format::read_log(path, analysis.records());
  analysis.finish();
  log.data = collector.take();
  return log;
}

}  // namespace sonde::analysis
