#include "analysis/kieker/kieker_trace_analysis.hpp"

#include <algorithm>

#include "analysis/kieker/execution_trace_text.hpp"
#include "analysis/kieker/message_trace_text.hpp"
#include "analysis/kieker/sequence_diagram_pic.hpp"
#include "analysis/kieker/sequence_diagram_svg.hpp"
#include "analysis/kieker/system_model_html.hpp"

namespace sonde::analysis {
namespace {

constexpr const char* kExecutionTraces = "executionTraces.txt";
constexpr const char* kMessageTraces = "messageTraces.txt";
constexpr const char* kInvalidTraces = "invalidTraceArtifacts.txt";

}  // namespace

KiekerTraceAnalysis::KiekerTraceAnalysis(KiekerOutputOptions options, KiekerSystemModel& model,
                                         OutputFiles& files)
    : options_(std::move(options)), model_(model), files_(files) {
  const struct {
    const GraphRequest& request;
    KiekerGraphKind kind;
    const char* file;
  } graphs[] = {
      {options_.deployment_component_graph, KiekerGraphKind::kDeploymentComponent,
       "deploymentComponentDependencyGraph.dot"},
      {options_.assembly_component_graph, KiekerGraphKind::kAssemblyComponent,
       "assemblyComponentDependencyGraph.dot"},
      {options_.container_graph, KiekerGraphKind::kContainer, "containerDependencyGraph.dot"},
      {options_.deployment_operation_graph, KiekerGraphKind::kDeploymentOperation,
       "deploymentOperationDependencyGraph.dot"},
      {options_.assembly_operation_graph, KiekerGraphKind::kAssemblyOperation,
       "assemblyOperationDependencyGraph.dot"},
  };
  for (const auto& g : graphs) {
    if (!g.request.enabled) continue;
    // Kieker's container graph takes no decoration.
    const auto times =
        g.kind == KiekerGraphKind::kContainer ? std::nullopt : g.request.response_times;
    graphs_.push_back({g.file, KiekerDependencyGraph(g.kind, times)});
  }
  if (options_.aggregated_deployment_call_tree) {
    deployment_tree_.emplace(AggregationLevel::kDeployment);
  }
  if (options_.aggregated_assembly_call_tree) assembly_tree_.emplace(AggregationLevel::kAssembly);
  if (options_.deployment_equivalence_classes) {
    deployment_classes_.emplace(AggregationLevel::kDeployment);
  }
  if (options_.assembly_equivalence_classes) {
    assembly_classes_.emplace(AggregationLevel::kAssembly);
  }
}

KiekerTraceAnalysis::~KiekerTraceAnalysis() = default;

void KiekerTraceAnalysis::failed(const std::string& name) {
  if (std::find(failed_.begin(), failed_.end(), name) == failed_.end()) failed_.push_back(name);
}

void KiekerTraceAnalysis::write(const std::string& name, std::string_view content) {
  const std::string file = options_.prefix + name;
  if (!files_.write(file, content)) failed(file);
}

void KiekerTraceAnalysis::append(const std::string& name, std::string_view content) {
  const std::string file = options_.prefix + name;
  if (!files_.append(file, content)) failed(file);
}

void KiekerTraceAnalysis::add_text(const char* name, bool& started, std::string_view content) {
  if (started) {
    append(name, content);
  } else {
    write(name, content);
    started = true;
  }
}

void KiekerTraceAnalysis::on_invalid_trace(const InvalidTrace& trace) {
  ++invalid_traces_;
  // Kieker prints what it had collected of OperationExecutionRecord traces
  // that fail its checks; broken flow-event traces never become execution
  // traces there, so there is nothing to print for them.
  if (!options_.invalid_traces || trace.partial.origin != TraceOrigin::kExecutionRecords ||
      trace.partial.executions.empty()) {
    return;
  }
  const KiekerTrace k = resolve_kieker_trace(trace.partial, model_, options_.trace);
  add_text(kInvalidTraces, invalid_traces_started_, execution_trace_text(k, model_) + "\n");
}

void KiekerTraceAnalysis::on_trace(const Trace& trace) {
  ++traces_;
  const KiekerTrace k = resolve_kieker_trace(trace, model_, options_.trace);
  const std::string id = std::to_string(trace.trace_id);
  // Kieker's writers print each trace followed by an empty line.
  if (options_.execution_traces) {
    add_text(kExecutionTraces, execution_traces_started_, execution_trace_text(k, model_) + "\n");
  }
  if (options_.message_traces) {
    add_text(kMessageTraces, message_traces_started_, message_trace_text(k, model_) + "\n");
  }
  const struct {
    bool enabled;
    AggregationLevel level;
    const char* file;
  } diagrams[] = {
      {options_.deployment_sequence_diagrams, AggregationLevel::kDeployment,
       "deploymentSequenceDiagram-"},
      {options_.assembly_sequence_diagrams, AggregationLevel::kAssembly,
       "assemblySequenceDiagram-"},
  };
  for (const auto& d : diagrams) {
    if (!d.enabled) continue;
    const SequenceDiagram diagram = sequence_diagram(k, model_, d.level, options_.short_labels);
    write(d.file + id + ".pic", sequence_diagram_pic(diagram));
    if (options_.sequence_diagram_svg) write(d.file + id + ".svg", sequence_diagram_svg(diagram));
  }
  if (options_.call_trees) {
    write("callTree-" + id + ".dot", trace_call_tree_dot(k, model_, options_.short_labels));
  }
  if (deployment_tree_) deployment_tree_->add(k);
  if (assembly_tree_) assembly_tree_->add(k);
  if (deployment_classes_) deployment_classes_->add(k);
  if (assembly_classes_) assembly_classes_->add(k);
  for (Graph& g : graphs_) g.graph.add(k);
}

void KiekerTraceAnalysis::finish() {
  if (options_.execution_traces && !execution_traces_started_) write(kExecutionTraces, "");
  if (options_.message_traces && !message_traces_started_) write(kMessageTraces, "");
  if (options_.invalid_traces && !invalid_traces_started_) write(kInvalidTraces, "");
  if (deployment_tree_) {
    write("aggregatedDeploymentCallTree.dot",
          aggregated_call_tree_dot(*deployment_tree_, model_, options_.short_labels));
  }
  if (assembly_tree_) {
    write("aggregatedAssemblyCallTree.dot",
          aggregated_call_tree_dot(*assembly_tree_, model_, options_.short_labels));
  }
  if (deployment_classes_) {
    write("traceDeploymentEquivClasses.txt", equivalence_classes_text(*deployment_classes_));
  }
  if (assembly_classes_) {
    write("traceAssemblyEquivClasses.txt", equivalence_classes_text(*assembly_classes_));
  }
  if (options_.system_model) write("system-entities.html", system_model_html(model_));
  for (const Graph& g : graphs_) {
    write(g.file, kieker_dependency_graph_dot(g.graph, model_, options_.short_labels,
                                              options_.include_self_loops));
  }
}

}  // namespace sonde::analysis
