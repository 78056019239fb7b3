#include "analysis/model/dependency_graph.hpp"

#include <algorithm>

#include "analysis/model/call_tree.hpp"

namespace sonde::analysis {

DependencyGraph::DependencyGraph(AggregationLevel level) : level_(level) {
  nodes_.emplace_back();  // 'Entry'
}

int32_t DependencyGraph::node_for(const Execution& e) {
  const OperationKey key = operation_key(e, level_);
  auto [it, inserted] = node_index_.try_emplace(key, static_cast<int32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({key, {}});
  return it->second;
}

void DependencyGraph::add(const Trace& trace) {
  const CallTree tree = build_call_tree(trace);
  std::vector<int32_t> node_of(trace.executions.size());
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const Execution& e = trace.executions[i];
    node_of[i] = node_for(e);
    nodes_[node_of[i]].time.add(e.duration(), e.failed);
    const int32_t caller = tree.parent[i] < 0 ? 0 : node_of[tree.parent[i]];
    ++edge_calls_[(static_cast<uint64_t>(caller) << 32) | static_cast<uint32_t>(node_of[i])];
  }
}

std::vector<DependencyEdge> DependencyGraph::edges() const {
  std::vector<DependencyEdge> out;
  out.reserve(edge_calls_.size());
  for (const auto& [k, calls] : edge_calls_) {
    out.push_back({static_cast<int32_t>(k >> 32), static_cast<int32_t>(k & 0xffffffffu), calls});
  }
  std::sort(out.begin(), out.end(), [](const DependencyEdge& a, const DependencyEdge& b) {
    return a.caller != b.caller ? a.caller < b.caller : a.callee < b.callee;
  });
  return out;
}

}  // namespace sonde::analysis
