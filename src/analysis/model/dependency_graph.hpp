// The operation dependency graph: one node per operation (at the chosen
// aggregation level), one edge per caller -> callee pair with the number of
// calls, plus a virtual 'Entry' node calling each trace's entry execution.
// Nodes carry the count and inclusive (response) time of their executions.
// Kieker's "deployment/assembly operation dependency graph".
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "analysis/model/operation_key.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct DependencyNode {
  OperationKey key;  // empty for 'Entry'
  TimeAccumulator time;
};

struct DependencyEdge {
  int32_t caller = 0;
  int32_t callee = 0;
  uint64_t calls = 0;
};

class DependencyGraph : public TraceSink {
 public:
  explicit DependencyGraph(AggregationLevel level = AggregationLevel::kDeployment);

  void add(const Trace& trace);
  void on_trace(const Trace& trace) override { add(trace); }
  void on_invalid_trace(const InvalidTrace&) override {}

  // nodes()[0] is 'Entry'; the others in order of first appearance.
  const std::vector<DependencyNode>& nodes() const { return nodes_; }
  // Sorted by (caller, callee).
  std::vector<DependencyEdge> edges() const;
  AggregationLevel level() const { return level_; }

 private:
  struct EdgeHash {
    size_t operator()(uint64_t k) const noexcept { return std::hash<uint64_t>()(k); }
  };
  int32_t node_for(const Execution& e);

  AggregationLevel level_;
  std::vector<DependencyNode> nodes_;
  std::unordered_map<OperationKey, int32_t, OperationKeyHash> node_index_;
  std::unordered_map<uint64_t, uint64_t, EdgeHash> edge_calls_;  // (caller << 32 | callee) -> calls
};

}  // namespace sonde::analysis
