#include "analysis/kieker/kieker_call_tree.hpp"

#include "analysis/model/call_tree.hpp"
#include "analysis/text/dot_escape.hpp"

namespace sonde::analysis {
namespace {

const std::string kEntryLabel = "\"'Entry'\"";

// "SRV0::\n@3:..Bookstore\n.searchBook()" (deployment) or without the host.
std::string node_label(const KiekerSystemModel& model, const KiekerEntityIds& ids, bool deployment,
                       bool short_labels) {
  std::vector<std::string> lines;
  if (deployment) lines.push_back(model.container_name(ids.container) + "::");
  lines.push_back(kieker_component_label(model, ids.assembly, short_labels));
  lines.push_back("." + kieker_operation_label(model.operation_signature(ids.operation)));
  return dot_label(lines);
}

std::string node_line(size_t id, const std::string& label) {
  return std::to_string(id) + "[label =" + label + ",shape=none];\n";
}

std::string edge_line(size_t from, size_t to, const std::string& label) {
  return "\n" + std::to_string(from) + "->" + std::to_string(to) +
         "[style=solid,arrowhead=none,label=\"" + label + "\" ]\n";
}

}  // namespace

std::string trace_call_tree_dot(const KiekerTrace& trace, const KiekerSystemModel& model,
                                bool short_labels) {
  // Node i + 1 is execution i: eoi order is the tree's pre-order.
  std::string out = "digraph G {\n" + node_line(0, kEntryLabel);
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    out += node_line(i + 1, node_label(model, trace.executions[i].ids, true, short_labels));
  }
  const CallTree tree = build_call_tree(*trace.trace);
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const size_t parent = tree.parent[i] < 0 ? 0 : static_cast<size_t>(tree.parent[i]) + 1;
    out += edge_line(parent, i + 1, std::to_string(i + 1) + ".");
  }
  out += "\n}\n";
  return out;
}

KiekerAggregatedCallTree::KiekerAggregatedCallTree(AggregationLevel level) : level_(level) {
  nodes_.emplace_back();  // 'Entry'
}

void KiekerAggregatedCallTree::add(const KiekerTrace& trace) {
  const CallTree tree = build_call_tree(*trace.trace);
  // Pre-order guarantees that a caller's node exists before its callees'.
  std::vector<int32_t> node_of(trace.executions.size());
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const KiekerExecution& k = trace.executions[i];
    const int32_t pair =
        level_ == AggregationLevel::kAssembly ? k.assembly_pair : k.allocation_pair;
    const int32_t parent = tree.parent[i] < 0 ? 0 : node_of[static_cast<size_t>(tree.parent[i])];
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) | static_cast<uint32_t>(pair);
    auto [it, inserted] = child_index_.try_emplace(key, static_cast<int32_t>(nodes_.size()));
    if (inserted) {
      nodes_.push_back({pair, parent, 0, {}});
      nodes_[static_cast<size_t>(parent)].children.push_back(it->second);
    }
    node_of[i] = it->second;
    ++nodes_[static_cast<size_t>(it->second)].calls;
  }
}

std::string aggregated_call_tree_dot(const KiekerAggregatedCallTree& tree,
                                     const KiekerSystemModel& model, bool short_labels) {
  const auto& nodes = tree.nodes();
  const bool deployment = tree.level() == AggregationLevel::kDeployment;
  // Number the nodes in pre-order with an explicit stack (trees may be deep).
  std::vector<int32_t> preorder;
  preorder.reserve(nodes.size());
  std::vector<int32_t> stack = {0};
  while (!stack.empty()) {
    const int32_t n = stack.back();
    stack.pop_back();
    preorder.push_back(n);
    const auto& children = nodes[static_cast<size_t>(n)].children;
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
  std::vector<size_t> number(nodes.size());
  for (size_t i = 0; i < preorder.size(); ++i) number[static_cast<size_t>(preorder[i])] = i;

  std::string out = "digraph G {\n" + node_line(0, kEntryLabel);
  for (size_t i = 1; i < preorder.size(); ++i) {
    const int32_t pair = nodes[static_cast<size_t>(preorder[i])].pair;
    const KiekerEntityIds ids =
        deployment ? model.allocation_pair_entities(pair) : model.assembly_pair_entities(pair);
    out += node_line(i, node_label(model, ids, deployment, short_labels));
  }
  for (size_t i = 1; i < preorder.size(); ++i) {
    const auto& node = nodes[static_cast<size_t>(preorder[i])];
    out += edge_line(number[static_cast<size_t>(node.parent)], i, std::to_string(node.calls));
  }
  out += "\n}\n";
  return out;
}

}  // namespace sonde::analysis
