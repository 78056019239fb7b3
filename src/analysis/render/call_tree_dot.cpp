// DOT for the aggregated call tree (graph_dot.hpp). Nodes are written in
// index order and edges from the parent links, so no recursion is needed
// however deep the tree.
#include <string>
#include <vector>

#include "analysis/model/operation_signature.hpp"
#include "analysis/render/graph_dot.hpp"
#include "analysis/render/graph_labels.hpp"
#include "analysis/text/dot_escape.hpp"

namespace sonde::analysis {

std::string to_dot(const AggregatedCallTree& tree, const DotOptions& options) {
  const auto& nodes = tree.nodes();
  const bool deployment = tree.level() == AggregationLevel::kDeployment;
  std::string out = "digraph G {\n node [shape=none];\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> lines;
    if (i == 0) {
      lines.push_back("'Entry'");
    } else {
      const AggregatedCallNode& n = nodes[i];
      if (deployment) lines.push_back(std::string(n.key.host) + "::");
      if (is_dotted_member_of(n.key.component, n.key.operation)) {
        // Kieker's layout: "Catalog" over ".getBook(..)".
        lines.push_back(component_label(n.key.component, options.short_labels));
        lines.push_back("." + operation_label(n.key.operation, options.short_labels));
      } else {
        // A C++ name on one line, as the code writes it: "Circle::area()";
        // a free function under its module, which its name does not say.
        if (n.key.operation.find("::") == std::string_view::npos && !n.key.component.empty())
          lines.push_back(component_label(n.key.component, options.short_labels));
        lines.push_back(
            operation_display_label(n.key.component, n.key.operation, options.short_labels));
      }
      if (options.show_times) lines.push_back(timing_label(n.time));
    }
    out += " n" + std::to_string(i) + " [label=" + dot_label(lines) + "];\n";
  }
  for (size_t i = 1; i < nodes.size(); ++i) {
    out += " n" + std::to_string(nodes[i].parent) + " -> n" + std::to_string(i) +
           " [label=" + dot_quote(std::to_string(nodes[i].time.count)) + ", arrowhead=none];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace sonde::analysis
