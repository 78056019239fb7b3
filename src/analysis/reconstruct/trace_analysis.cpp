#include "analysis/reconstruct/trace_analysis.hpp"

namespace sonde::analysis {

TraceAnalysis::TraceAnalysis(AnalysisOptions options)
    : options_(options),
      strings_(std::make_shared<format::StringPool>()),
      operations_(options.statistics_level),
      reconstructor_(*this, options.reconstruction, strings_) {
  if (options_.build_call_tree) call_tree_.emplace(options_.graph_level);
  if (options_.build_dependency_graph) dependency_graph_.emplace(options_.graph_level);
}

void TraceAnalysis::on_trace(const Trace& trace) {
  summary_.on_trace(trace);
  operations_.on_trace(trace);
  if (call_tree_) call_tree_->on_trace(trace);
  if (dependency_graph_) dependency_graph_->on_trace(trace);
  for (TraceSink* sink : extra_sinks_) sink->on_trace(trace);
}

void TraceAnalysis::on_invalid_trace(const InvalidTrace& trace) {
  summary_.on_invalid_trace(trace);
  for (TraceSink* sink : extra_sinks_) sink->on_invalid_trace(trace);
}

AnalysisResult TraceAnalysis::finish() {
  reconstructor_.finish();
  AnalysisResult result;
  result.reconstruction = reconstructor_.stats();
  result.record_types = reconstructor_.record_type_counts();
  result.read.records =
      result.reconstruction.records;  // analyze_log replaces `read` with the reader's
  result.traces = summary_.results();
  result.operations = operations_.results();
  result.call_tree = std::move(call_tree_);
  result.dependency_graph = std::move(dependency_graph_);
  result.strings = strings_;
  return result;
}

}  // namespace sonde::analysis
