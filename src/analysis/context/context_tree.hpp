// The calling-context tree (CCT) of seed 000, Section 4: root (all
// observations) -> operation -> caller contexts -> stack contexts -> trace
// contexts, and the three operators that shrink it to a timing model:
//
//  1. remove a leaf without siblings (it has its parent's observations);
//  2. link a leaf with fewer than min_observations to its nearest ancestor
//     with enough: the leaf stays (the leaves keep partitioning the
//     observations) but is modelled by the ancestor's distribution. The
//     search stops at the operation node: a rare operation is its own model;
//  3. merge sibling leaves that both have enough observations and similar
//     distributions, most similar pair first, while the distance is at most
//     `similarity` and (if max_leaves > 0) the tree has more than
//     max_leaves leaves. Distance (the paper names median and IQR but gives
//     no formula):
//        d(a, b) = (|med_a - med_b| + |IQR_a - IQR_b|) / s,
//        s = max(IQR_a, IQR_b, 5 % of max(med_a, med_b), 1 ns)
//     i.e. medians and spreads compared in units of the larger spread; the
//     5 % floor keeps near-constant timings from never merging.
//
// The paper applies them in random order; this applies them in the fixed
// order 1, 2, 3 until nothing changes, so the model is reproducible. The
// final model is the set of leaves; a linked leaf's model entity is its
// ancestor.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/context/context_data.hpp"
#include "analysis/context/context_levels.hpp"

namespace sonde::analysis {

struct ContextTreeOptions {
  uint64_t min_observations = 30;
  double similarity = 0.5;
  size_t max_leaves = 0;  // 0: no limit
};

struct ContextNode {
  int level = -1;                 // -1 root, else a ContextLevel
  uint32_t context = kNoContext;  // id at `level` (the first one for a merged node)
  uint32_t merged = 1;            // contexts of `level` merged into this node
  int32_t parent = -1;
  std::vector<int32_t> children;  // live and removed; see live_children()
  uint32_t live_children = 0;     // children not removed (kept so leaf tests are O(1))
  std::vector<uint32_t> members;  // trace contexts whose observations it holds
  uint64_t n = 0;
  double mean = 0, sd = 0;  // population σ
  Quartiles quartiles;
  double bimodality = 0;
  bool removed = false;
  int32_t linked_to = -1;  // operator 2: modelled by this ancestor
};

struct ContextOperatorCounts {
  uint64_t removed = 0, linked = 0, merged = 0, rounds = 0;
};

struct ContextModelSummary {
  size_t leaves = 0;
  size_t entities = 0;  // distinct distributions (linked leaves share their ancestor's)
  size_t linked_leaves = 0;
  uint64_t observations = 0;
  double weighted_sd = 0;  // Σ n_leaf σ(entity) / N
  double reduction_percent = 0;
  double bimodal_percent = 0;            // executions in bimodal entities (n ≥ 10), percent
  std::vector<size_t> leaves_per_level;  // by ContextLevel
};

class ContextTree {
 public:
  ContextTree(const ContextData& data, const ContextIndex& index);

  ContextOperatorCounts apply_operators(const ContextTreeOptions& options);

  const std::vector<ContextNode>& nodes() const { return nodes_; }
  bool is_leaf(int32_t node) const;
  std::vector<int32_t> leaves() const;
  std::vector<int32_t> live_children(int32_t node) const;
  int32_t entity(int32_t leaf) const {
    return nodes_[static_cast<size_t>(leaf)].linked_to >= 0
               ? nodes_[static_cast<size_t>(leaf)].linked_to
               : leaf;
  }
  // Over all operations (op = kNoContext) or one.
  ContextModelSummary summarize(uint32_t op = kNoContext) const;
  uint32_t operation_of(int32_t node) const;

  static double distance(const ContextNode& a, const ContextNode& b);

 private:
  int32_t add_node(int level, uint32_t context, int32_t parent);
  void remove(ContextNode& node);
  void compute_stats(ContextNode& node);
  bool remove_only_children();
  bool link_small_leaves(uint64_t min_observations);
  bool merge_similar(const ContextTreeOptions& options, ContextOperatorCounts& counts);

  const ContextData& data_;
  const ContextIndex& index_;
  std::vector<ContextNode> nodes_;
  std::vector<int64_t> scratch_;
  uint64_t removed_ = 0, linked_ = 0;
};

}  // namespace sonde::analysis
