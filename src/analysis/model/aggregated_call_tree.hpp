// The call trees of many traces merged into one: executions reached by the
// same call path from the entry (the same operation, at the chosen
// aggregation level, under the same chain of callers) share a node, which
// counts them and sums their inclusive time. Kieker's "aggregated
// deployment/assembly call tree".
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/model/operation_key.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct AggregatedCallNode {
  OperationKey key;               // empty for the root
  int32_t parent = -1;            // -1 for the root
  TimeAccumulator time;           // inclusive times of the executions merged here
  std::vector<int32_t> children;  // in order of first appearance
};

class AggregatedCallTree : public TraceSink {
 public:
  explicit AggregatedCallTree(AggregationLevel level = AggregationLevel::kDeployment);

  void add(const Trace& trace);
  void on_trace(const Trace& trace) override { add(trace); }
  void on_invalid_trace(const InvalidTrace&) override {}

  // nodes()[0] is the virtual 'Entry' root; its children are the trace entries.
  const std::vector<AggregatedCallNode>& nodes() const { return nodes_; }
  AggregationLevel level() const { return level_; }
  uint64_t traces() const { return traces_; }

 private:
  struct ChildKey {
    int32_t parent;
    OperationKey key;
    bool operator==(const ChildKey&) const = default;
  };
  struct ChildKeyHash {
    size_t operator()(const ChildKey& k) const noexcept {
      return OperationKeyHash()(k.key) * 31 + static_cast<size_t>(k.parent);
    }
  };

  AggregationLevel level_;
  uint64_t traces_ = 0;
  std::vector<AggregatedCallNode> nodes_;
  std::unordered_map<ChildKey, int32_t, ChildKeyHash> child_index_;
};

}  // namespace sonde::analysis
