// Call trees in Kieker's DOT form: one per trace (callTree-<traceId>.dot,
// deployment level, edges numbered in call order) and the aggregated ones
// (aggregatedDeploymentCallTree.dot, aggregatedAssemblyCallTree.dot, edges
// labelled with call counts). Nodes are numbered in pre-order from 0 =
// 'Entry' and labelled like "SRV0::\n@3:..Bookstore\n.searchBook()".
//
// The aggregated tree merges calls that reach the same operation of the
// same component (the same "pair") by the same path from 'Entry'; children
// keep the order in which calls first reached them. Its size grows with
// the distinct paths, not with the traces.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/kieker/kieker_trace.hpp"
#include "analysis/model/operation_key.hpp"

namespace sonde::analysis {

std::string trace_call_tree_dot(const KiekerTrace& trace, const KiekerSystemModel& model,
                                bool short_labels);

class KiekerAggregatedCallTree {
 public:
  explicit KiekerAggregatedCallTree(AggregationLevel level);

  void add(const KiekerTrace& trace);

  struct Node {
    int32_t pair = kKiekerRootId;  // assembly or allocation pair, per level
    int32_t parent = -1;
    uint64_t calls = 0;
    std::vector<int32_t> children;  // in order of first call
  };
  // nodes()[0] is 'Entry'.
  const std::vector<Node>& nodes() const { return nodes_; }
  AggregationLevel level() const { return level_; }

 private:
  AggregationLevel level_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int32_t> child_index_;  // (parent << 32 | pair) -> node
};

std::string aggregated_call_tree_dot(const KiekerAggregatedCallTree& tree,
                                     const KiekerSystemModel& model, bool short_labels);

}  // namespace sonde::analysis
