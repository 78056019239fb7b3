// Kieker's trace-analysis outputs, from one pass over the traces: a
// TraceSink that writes each selected output under Kieker's file name.
// Per-trace outputs (execution and message traces, sequence diagrams, call
// trees) are written as traces arrive and not kept; the aggregated ones
// (dependency graphs, aggregated call trees, equivalence classes) grow with
// the distinct operations, paths and classes, and are written by finish().
//
// Wiring, as `sonde trace-analysis` does it (Kieker's order of stages):
//   reader -> KiekerRecordFilter -> TraceReconstructor -> TraceStartOrder
//          -> KiekerTraceAnalysis -> OutputFiles
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/kieker/kieker_call_tree.hpp"
#include "analysis/kieker/kieker_dependency_graph.hpp"
#include "analysis/kieker/kieker_trace.hpp"
#include "analysis/kieker/trace_equivalence.hpp"

namespace sonde::analysis {

// Where outputs go; the command writes files into a directory, tests keep
// them in memory.
class OutputFiles {
 public:
  virtual ~OutputFiles() = default;
  // Creates or replaces `name`. False on failure.
  virtual bool write(const std::string& name, std::string_view content) = 0;
  // Appends to `name`, written before in this run. False on failure.
  virtual bool append(const std::string& name, std::string_view content) = 0;
};

struct GraphRequest {
  bool enabled = false;
  std::optional<TimeUnit> response_times;  // Kieker's responseTimes-<unit> decoration
};

struct KiekerOutputOptions {
  bool execution_traces = false;              // executionTraces.txt
  bool message_traces = false;                // messageTraces.txt
  bool invalid_traces = false;                // invalidTraceArtifacts.txt
  bool deployment_sequence_diagrams = false;  // deploymentSequenceDiagram-<id>.pic
  bool assembly_sequence_diagrams = false;    // assemblySequenceDiagram-<id>.pic
  bool sequence_diagram_svg = false;          // the same drawn as .svg too
  bool call_trees = false;                    // callTree-<id>.dot
  bool aggregated_deployment_call_tree = false;
  bool aggregated_assembly_call_tree = false;
  bool deployment_equivalence_classes = false;  // traceDeploymentEquivClasses.txt
  bool assembly_equivalence_classes = false;    // traceAssemblyEquivClasses.txt
  bool system_model = false;                    // system-entities.html
  GraphRequest container_graph;
  GraphRequest assembly_component_graph;
  GraphRequest deployment_component_graph;
  GraphRequest assembly_operation_graph;
  GraphRequest deployment_operation_graph;

  bool short_labels = false;        // Kieker's --short-labels
  bool include_self_loops = false;  // Kieker's --include-self-loops
  KiekerTraceOptions trace;
  std::string prefix;  // put in front of every file name (Kieker's --output-filename-prefix)
};

class KiekerTraceAnalysis : public TraceSink {
 public:
  // `model` and `files` must outlive this object.
  KiekerTraceAnalysis(KiekerOutputOptions options, KiekerSystemModel& model, OutputFiles& files);
  ~KiekerTraceAnalysis() override;

  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override;

  // Writes the aggregated outputs (and the text files, even if empty).
  // Call once, after the last trace.
  void finish();

  uint64_t traces() const { return traces_; }
  uint64_t invalid_traces() const { return invalid_traces_; }
  // Files that could not be written, each named once.
  const std::vector<std::string>& failed_files() const { return failed_; }

 private:
  struct Graph {
    std::string file;
    KiekerDependencyGraph graph;
  };

  void write(const std::string& name, std::string_view content);
  void append(const std::string& name, std::string_view content);
  // Writes the first text of a run, appends the rest.
  void add_text(const char* name, bool& started, std::string_view content);
  void failed(const std::string& name);

  KiekerOutputOptions options_;
  KiekerSystemModel& model_;
  OutputFiles& files_;
  std::vector<Graph> graphs_;
  std::optional<KiekerAggregatedCallTree> deployment_tree_, assembly_tree_;
  std::optional<TraceEquivalenceClasses> deployment_classes_, assembly_classes_;
  uint64_t traces_ = 0;
  uint64_t invalid_traces_ = 0;
  bool execution_traces_started_ = false;
  bool message_traces_started_ = false;
  bool invalid_traces_started_ = false;
  std::vector<std::string> failed_;
};

}  // namespace sonde::analysis
