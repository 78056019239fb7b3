// DOT for the operation dependency graph (graph_dot.hpp): operations nested
// in component clusters, nested in host clusters on the deployment level,
// as Kieker draws them.
#include <string>
#include <vector>

#include "analysis/render/graph_dot.hpp"
#include "analysis/render/graph_labels.hpp"
#include "analysis/text/dot_escape.hpp"

namespace sonde::analysis {
namespace {

// Groups of node indices in order of first appearance.
struct ComponentGroup {
  std::string_view component;
  std::vector<size_t> nodes;
};
struct HostGroup {
  std::string_view host;
  std::vector<ComponentGroup> components;
};

std::vector<HostGroup> group_nodes(const std::vector<DependencyNode>& nodes) {
  std::vector<HostGroup> hosts;
  for (size_t i = 1; i < nodes.size(); ++i) {
    const OperationKey& k = nodes[i].key;
    HostGroup* h = nullptr;
    for (HostGroup& g : hosts) {
      if (g.host == k.host) h = &g;
    }
    if (h == nullptr) h = &hosts.emplace_back(HostGroup{k.host, {}});
    ComponentGroup* c = nullptr;
    for (ComponentGroup& g : h->components) {
      if (g.component == k.component) c = &g;
    }
    if (c == nullptr) c = &h->components.emplace_back(ComponentGroup{k.component, {}});
    c->nodes.push_back(i);
  }
  return hosts;
}

}  // namespace

std::string to_dot(const DependencyGraph& graph, const DotOptions& options) {
  const auto& nodes = graph.nodes();
  const bool deployment = graph.level() == AggregationLevel::kDeployment;
  std::string out = "digraph G {\n rankdir=LR;\n n0 [label=\"'Entry'\", shape=none];\n";
  const std::vector<HostGroup> hosts = group_nodes(nodes);
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::string indent = deployment ? "  " : " ";
    if (deployment) {
      const std::vector<std::string> label = {"<<execution container>>",
                                              std::string(hosts[h].host)};
      out += " subgraph cluster_h" + std::to_string(h) + " {\n  label=" + dot_label(label) + ";\n";
    }
    for (size_t c = 0; c < hosts[h].components.size(); ++c) {
      const ComponentGroup& group = hosts[h].components[c];
      const std::vector<std::string> label = {
          deployment ? "<<deployment component>>" : "<<assembly component>>",
          component_label(group.component, options.short_labels)};
      out += indent + "subgraph cluster_h" + std::to_string(h) + "_c" + std::to_string(c) + " {\n" +
             indent + " label=" + dot_label(label) + ";\n";
      for (size_t n : group.nodes) {
        std::vector<std::string> lines = {
            operation_label(nodes[n].key.operation, options.short_labels)};
        if (options.show_times) lines.push_back(timing_label(nodes[n].time));
        out +=
            indent + " n" + std::to_string(n) + " [label=" + dot_label(lines) + ", shape=oval];\n";
      }
      out += indent + "}\n";
    }
    if (deployment) out += " }\n";
  }
  for (const DependencyEdge& e : graph.edges()) {
    out += " n" + std::to_string(e.caller) + " -> n" + std::to_string(e.callee) +
           " [label=" + dot_quote(std::to_string(e.calls)) + ", arrowhead=open];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace sonde::analysis
