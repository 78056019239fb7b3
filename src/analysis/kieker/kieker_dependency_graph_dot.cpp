// DOT for KiekerDependencyGraph in Kieker's layout: components and
// operations boxed in clusters per container / component, node ids
// "depNode_<id>", edges labelled with call counts. Nodes and clusters are
// written in ascending id order (Kieker's order is its hash maps').
#include <map>
#include <set>
#include <vector>

#include "analysis/kieker/kieker_dependency_graph.hpp"
#include "analysis/text/dot_escape.hpp"

namespace sonde::analysis {
namespace {

using Node = KiekerDependencyGraph::Node;

std::string node_ref(int32_t id) { return "depNode_" + std::to_string(id); }

std::string node_line(int32_t id, const std::vector<std::string>& label, std::string_view shape,
                      bool assumed) {
  return "\"" + node_ref(id) + "\" [label=" + dot_label(label) + ",shape=\"" + std::string(shape) +
         "\",style=\"filled\",color=\"#000000\",fillcolor=\"" + (assumed ? "gray" : "white") +
         "\"]\n";
}

std::string cluster_open(const std::string& name, const std::vector<std::string>& label) {
  return "subgraph \"" + name + "\" {\n label = " + dot_label(label) +
         ";\n shape = \"box\";\n style = \"filled\";\n fillcolor = \"white\";\n";
}

// Kieker's decoration: "min: 2ms, avg: 4ms, max: 122ms," / "total: 4170ms".
void add_times(std::vector<std::string>& label, const KiekerDependencyGraph& graph,
               const Node& node) {
  if (!graph.response_times() || node.times.count == 0) return;
  const std::string unit(to_string(*graph.response_times()));
  label.push_back("min: " + std::to_string(node.times.min) + unit +
                  ", avg: " + std::to_string(node.times.rounded_mean()) + unit +
                  ", max: " + std::to_string(node.times.max) + unit + ",");
  label.push_back("total: " + std::to_string(node.times.total) + unit);
}

std::string component_nodes(const KiekerDependencyGraph& graph, const KiekerSystemModel& model,
                            bool short_labels) {
  const bool deployment = graph.kind() == KiekerGraphKind::kDeploymentComponent;
  std::string out;
  std::map<int32_t, std::vector<int32_t>> by_container;  // deployment only
  for (const auto& [id, node] : graph.nodes()) {
    if (id == kKiekerRootId) continue;
    if (deployment) {
      by_container[model.allocation_container(id)].push_back(id);
      continue;
    }
    std::vector<std::string> label = {"<<assembly component>>",
                                      kieker_component_label(model, id, short_labels)};
    add_times(label, graph, node);
    out += node_line(id, label, "box", node.assumed) + "\n";
  }
  for (const auto& [container, ids] : by_container) {
    out += cluster_open("cluster_container" + std::to_string(container),
                        {"<<execution container>>", model.container_name(container)});
    for (int32_t id : ids) {
      const Node& node = graph.nodes().at(id);
      std::vector<std::string> label = {
          "<<deployment component>>",
          kieker_component_label(model, model.allocation_assembly(id), short_labels)};
      add_times(label, graph, node);
      out += node_line(id, label, "box", node.assumed);
    }
    out += "}\n";
  }
  return out;
}

std::string container_nodes(const KiekerDependencyGraph& graph, const KiekerSystemModel& model) {
  std::string out;
  for (const auto& [id, node] : graph.nodes()) {
    if (id == kKiekerRootId) continue;
    std::vector<std::string> label = {"<<execution container>>", model.container_name(id)};
    add_times(label, graph, node);
    out += node_line(id, label, "box3d", false) + "\n";
  }
  return out;
}

std::string operation_nodes(const KiekerDependencyGraph& graph, const KiekerSystemModel& model,
                            bool short_labels) {
  const bool deployment = graph.kind() == KiekerGraphKind::kDeploymentOperation;
  // container -> component -> operation nodes; container 0 on the assembly level.
  std::map<int32_t, std::map<int32_t, std::vector<int32_t>>> groups;
  for (const auto& [id, node] : graph.nodes()) {
    if (id == kKiekerRootId) continue;
    const KiekerEntityIds e =
        deployment ? model.allocation_pair_entities(id) : model.assembly_pair_entities(id);
    groups[e.container][deployment ? e.allocation : e.assembly].push_back(id);
  }
  std::string out;
  for (const auto& [container, components] : groups) {
    if (deployment) {
      out += cluster_open("cluster_container" + std::to_string(container),
                          {"<<execution container>>", model.container_name(container)});
    }
    for (const auto& [component, ids] : components) {
      const int32_t assembly = deployment ? model.allocation_assembly(component) : component;
      out += cluster_open("cluster_component_" + std::to_string(component),
                          {deployment ? "<<deployment component>>" : "<<assembly component>>",
                           kieker_component_label(model, assembly, short_labels)});
      for (int32_t id : ids) {
        const Node& node = graph.nodes().at(id);
        const KiekerEntityIds e =
            deployment ? model.allocation_pair_entities(id) : model.assembly_pair_entities(id);
        std::vector<std::string> label = {
            kieker_operation_label(model.operation_signature(e.operation))};
        add_times(label, graph, node);
        out += node_line(id, label, "oval", node.assumed);
      }
      out += "}\n";
    }
    if (deployment) out += "}\n";
  }
  return out;
}

}  // namespace

std::string kieker_dependency_graph_dot(const KiekerDependencyGraph& graph,
                                        const KiekerSystemModel& model, bool short_labels,
                                        bool include_self_loops) {
  const KiekerGraphKind kind = graph.kind();
  // Kieker leaves a blank line after each node where nodes are not clustered.
  const bool flat =
      kind == KiekerGraphKind::kContainer || kind == KiekerGraphKind::kAssemblyComponent;
  std::string out = "digraph G {\n rankdir=LR;\n";
  out += "\"" + node_ref(kKiekerRootId) + "\" [label=\"'Entry'\",shape=\"none\"]\n";
  if (flat) out += "\n";
  switch (kind) {
    case KiekerGraphKind::kContainer:
      out += container_nodes(graph, model);
      break;
    case KiekerGraphKind::kAssemblyComponent:
    case KiekerGraphKind::kDeploymentComponent:
      out += component_nodes(graph, model, short_labels);
      break;
    case KiekerGraphKind::kAssemblyOperation:
    case KiekerGraphKind::kDeploymentOperation:
      out += operation_nodes(graph, model, short_labels);
      break;
  }
  for (const auto& [key, edge] : graph.edges()) {
    if (key.first == key.second && !include_self_loops) continue;
    out += node_ref(key.first) + "->" + node_ref(key.second) +
           "[label=" + std::to_string(edge.calls) + ", style=\"" +
           (edge.assumed ? "dashed" : "solid") + "\", arrowhead=\"open\", color=\"#000000\"]\n";
  }
  out += "}\n";
  return out;
}

}  // namespace sonde::analysis
