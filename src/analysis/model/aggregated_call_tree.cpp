#include "analysis/model/aggregated_call_tree.hpp"

#include "analysis/model/call_tree.hpp"

namespace sonde::analysis {

AggregatedCallTree::AggregatedCallTree(AggregationLevel level) : level_(level) {
  nodes_.emplace_back();  // 'Entry'
}

void AggregatedCallTree::add(const Trace& trace) {
  ++traces_;
  const CallTree tree = build_call_tree(trace);
  // Pre-order (eoi order) guarantees a caller's node exists before its callees'.
  std::vector<int32_t> node_of(trace.executions.size());
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const Execution& e = trace.executions[i];
    const int32_t parent_node = tree.parent[i] < 0 ? 0 : node_of[tree.parent[i]];
    const ChildKey ck{parent_node, operation_key(e, level_)};
    auto [it, inserted] = child_index_.try_emplace(ck, static_cast<int32_t>(nodes_.size()));
    if (inserted) {
      AggregatedCallNode node;
      node.key = ck.key;
      node.parent = parent_node;
      nodes_.push_back(std::move(node));
      nodes_[parent_node].children.push_back(it->second);
    }
    node_of[i] = it->second;
    nodes_[it->second].time.add(e.duration(), e.failed);
  }
}

}  // namespace sonde::analysis
