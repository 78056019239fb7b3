// One pass over a record stream: reconstruct traces and feed them, as they
// complete, to every collector (statistics, call tree, dependency graph).
// The result is the model all reporters (text, CSV, JSON, DOT) print from.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/aggregated_call_tree.hpp"
#include "analysis/model/dependency_graph.hpp"
#include "analysis/model/operation_statistics.hpp"
#include "analysis/model/trace_model.hpp"
#include "analysis/model/trace_summary.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/log_reader.hpp"
#include "format/record.hpp"
#include "format/string_pool.hpp"

namespace sonde::analysis {

struct AnalysisOptions {
  ReconstructionOptions reconstruction;
  // Statistics per operation regardless of host (assembly) or per host too.
  AggregationLevel statistics_level = AggregationLevel::kAssembly;
  AggregationLevel graph_level = AggregationLevel::kDeployment;
  bool build_call_tree = true;
  bool build_dependency_graph = true;
};

struct AnalysisResult {
  std::string path;  // the log, when read from one
  format::LogKind kind = format::LogKind::kUnknown;
  format::LogReadStats read;  // the reader's own report
  ReconstructionStats reconstruction;
  std::map<std::string, uint64_t> record_types;  // records seen per class name
  TraceCounts traces;
  std::vector<OperationStats> operations;  // sorted by total inclusive time
  std::optional<AggregatedCallTree> call_tree;
  std::optional<DependencyGraph> dependency_graph;
  // Owns the strings every string_view above points to.
  std::shared_ptr<format::StringPool> strings;
};

class TraceAnalysis : private TraceSink {
 public:
  explicit TraceAnalysis(AnalysisOptions options = {});
  TraceAnalysis(const TraceAnalysis&) = delete;
  TraceAnalysis& operator=(const TraceAnalysis&) = delete;

  // Where records go (e.g. format::read_log(path, analysis.records())).
  format::RecordSink& records() { return reconstructor_; }

  // Further consumers of every trace; must outlive this object's use.
  void add_sink(TraceSink& sink) { extra_sinks_.push_back(&sink); }

  // Closes the traces still open (end of input) and computes the results.
  // Call once; the object is spent afterwards.
  AnalysisResult finish();

 private:
  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override;

  AnalysisOptions options_;
  std::shared_ptr<format::StringPool> strings_;
  TraceSummaryCollector summary_;
  OperationStatistics operations_;
  std::optional<AggregatedCallTree> call_tree_;
  std::optional<DependencyGraph> dependency_graph_;
  std::vector<TraceSink*> extra_sinks_;
  TraceReconstructor reconstructor_;  // last: it calls back into the members above
};

// Reads the log at `path` (any kind format::read_log supports) and analyses
// it. Never throws on bad input: result.read says what went wrong.
AnalysisResult analyze_log(const std::string& path, const AnalysisOptions& options = {});

}  // namespace sonde::analysis
