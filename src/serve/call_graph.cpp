#include "serve/call_graph.hpp"

#include <map>
#include <sstream>

#include "analysis/model/operation_signature.hpp"
#include "analysis/text/dot_escape.hpp"

namespace sonde::serve {
namespace {

struct Graph {
  std::vector<std::string> operations{""};  // node id -> operation; 0 = Entry
  std::vector<uint64_t> calls{0};
  std::map<std::string, size_t> ids{{"", 0}};

  size_t id(const std::string& op) {
    auto [it, added] = ids.emplace(op, operations.size());
    if (added) {
      operations.push_back(op);
      calls.push_back(0);
    }
    return it->second;
  }
};

Graph build(const std::vector<store::CallEdge>& edges) {
  Graph g;
  for (const store::CallEdge& e : edges) {
    g.id(e.caller);
    g.calls[g.id(e.callee)] += e.calls;
  }
  return g;
}

std::string label(const std::string& op) {
  // The owner and the name, as the operation's language writes them.
  return op.empty() ? std::string("Entry") : analysis::operation_display_label({}, op, true);
}

}  // namespace

nlohmann::json call_graph_json(const std::vector<store::CallEdge>& edges) {
  Graph g = build(edges);
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < g.operations.size(); ++i) {
    nodes.push_back({{"id", i},
                     {"operation", g.operations[i]},
                     {"label", label(g.operations[i])},
                     {"calls", g.calls[i]}});
  }
  nlohmann::json out_edges = nlohmann::json::array();
  for (const store::CallEdge& e : edges) {
    out_edges.push_back(
        {{"caller", g.ids[e.caller]}, {"callee", g.ids[e.callee]}, {"calls", e.calls}});
  }
  return {{"nodes", nodes}, {"edges", out_edges}};
}

std::string call_graph_dot(const std::vector<store::CallEdge>& edges) {
  Graph g = build(edges);
  std::ostringstream dot;
  dot << "digraph operations {\n"
         "  rankdir=LR;\n"
         "  bgcolor=\"transparent\";\n"
         "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", color=\"#5b7db1\", "
         "fontname=\"Helvetica\", fontsize=11];\n"
         "  edge [color=\"#7a8699\", fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t i = 0; i < g.operations.size(); ++i) {
    if (i == 0) {
      dot << "  n0 [label=\"Entry\", shape=circle, fillcolor=\"#2f5d9e\", fontcolor=white];\n";
      continue;
    }
    const std::string lines[] = {label(g.operations[i]), std::to_string(g.calls[i]) + " calls"};
    dot << "  n" << i << " [label=" << analysis::dot_label(lines)
        << ", tooltip=" << analysis::dot_quote(g.operations[i]) << "];\n";
  }
  for (const store::CallEdge& e : edges) {
    dot << "  n" << g.ids[e.caller] << " -> n" << g.ids[e.callee] << " [label=\"" << e.calls
        << "\"];\n";
  }
  dot << "}\n";
  return dot.str();
}

}  // namespace sonde::serve
