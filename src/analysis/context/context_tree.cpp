#include "analysis/context/context_tree.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace sonde::analysis {

int32_t ContextTree::add_node(int level, uint32_t context, int32_t parent) {
  ContextNode node;
  node.level = level;
  node.context = context;
  node.parent = parent;
  nodes_.push_back(std::move(node));
  const auto id = static_cast<int32_t>(nodes_.size() - 1);
  if (parent >= 0) {
    nodes_[static_cast<size_t>(parent)].children.push_back(id);
    ++nodes_[static_cast<size_t>(parent)].live_children;
  }
  return id;
}

void ContextTree::remove(ContextNode& node) {
  node.removed = true;
  if (node.parent >= 0) --nodes_[static_cast<size_t>(node.parent)].live_children;
}

ContextTree::ContextTree(const ContextData& data, const ContextIndex& index)
    : data_(data), index_(index) {
  add_node(-1, kNoContext, -1);
  // Node of each context, per level; built top-down in id order.
  std::vector<int32_t> op_node(data.operations.size());
  for (uint32_t op = 0; op < op_node.size(); ++op) {
    op_node[op] = add_node(static_cast<int>(ContextLevel::kOperation), op, 0);
  }
  std::vector<int32_t> caller_node(data.caller_op.size());
  for (uint32_t c = 0; c < caller_node.size(); ++c) {
    caller_node[c] =
        add_node(static_cast<int>(ContextLevel::kCaller), c, op_node[data.caller_op[c]]);
  }
  std::vector<int32_t> stack_node(data.stack_op.size());
  for (uint32_t s = 0; s < stack_node.size(); ++s) {
    stack_node[s] =
        add_node(static_cast<int>(ContextLevel::kStack), s, caller_node[data.stack_caller[s]]);
  }
  for (uint32_t t = 0; t < data.trace_stack.size(); ++t) {
    int32_t node =
        add_node(static_cast<int>(ContextLevel::kTrace), t, stack_node[data.trace_stack[t]]);
    for (; node > 0; node = nodes_[static_cast<size_t>(node)].parent) {
      nodes_[static_cast<size_t>(node)].members.push_back(t);
    }
  }
  for (size_t i = 1; i < nodes_.size(); ++i) compute_stats(nodes_[i]);
  nodes_[0].n = data.observations.size();
}

void ContextTree::compute_stats(ContextNode& node) {
  scratch_.clear();
  for (uint32_t t : node.members) {
    const std::span<const int64_t> s = index_.samples(ContextLevel::kTrace, t);
    scratch_.insert(scratch_.end(), s.begin(), s.end());
  }
  Moments m;
  for (int64_t x : scratch_) m.add(static_cast<double>(x));
  node.n = m.n;
  node.mean = m.mean;
  node.sd = m.population_sd();
  node.bimodality = bimodality_coefficient(scratch_);
  node.quartiles = quartiles(scratch_);
}

bool ContextTree::is_leaf(int32_t node) const {
  const ContextNode& n = nodes_[static_cast<size_t>(node)];
  return !n.removed && node != 0 && n.live_children == 0;
}

std::vector<int32_t> ContextTree::live_children(int32_t node) const {
  std::vector<int32_t> out;
  for (int32_t c : nodes_[static_cast<size_t>(node)].children)
    if (!nodes_[static_cast<size_t>(c)].removed) out.push_back(c);
  return out;
}

std::vector<int32_t> ContextTree::leaves() const {
  std::vector<int32_t> out;
  for (size_t i = 1; i < nodes_.size(); ++i)
    if (is_leaf(static_cast<int32_t>(i))) out.push_back(static_cast<int32_t>(i));
  return out;
}

uint32_t ContextTree::operation_of(int32_t node) const {
  while (node > 0 && nodes_[static_cast<size_t>(node)].level > 0) {
    node = nodes_[static_cast<size_t>(node)].parent;
  }
  return node > 0 ? nodes_[static_cast<size_t>(node)].context : kNoContext;
}

double ContextTree::distance(const ContextNode& a, const ContextNode& b) {
  const double iqr_a = a.quartiles.iqr(), iqr_b = b.quartiles.iqr();
  const double scale =
      std::max({iqr_a, iqr_b, 0.05 * std::max(a.quartiles.median, b.quartiles.median), 1.0});
  return (std::abs(a.quartiles.median - b.quartiles.median) + std::abs(iqr_a - iqr_b)) / scale;
}

// Operator 1. Operation nodes stay: they are the coarsest model.
bool ContextTree::remove_only_children() {
  bool changed = false;
  // Children have higher ids than parents: one pass bottom-up cascades.
  for (size_t i = nodes_.size(); i-- > 1;) {
    ContextNode& n = nodes_[i];
    if (n.level <= 0 || !is_leaf(static_cast<int32_t>(i))) continue;
    if (nodes_[static_cast<size_t>(n.parent)].live_children == 1) {
      remove(n);
      n.linked_to = -1;
      ++removed_;
      changed = true;
    }
  }
  return changed;
}

// Operator 2.
bool ContextTree::link_small_leaves(uint64_t min_observations) {
  bool changed = false;
  for (size_t i = 1; i < nodes_.size(); ++i) {
    ContextNode& n = nodes_[i];
    if (n.level <= 0 || n.linked_to >= 0 || n.n >= min_observations) continue;
    if (!is_leaf(static_cast<int32_t>(i))) continue;
    int32_t a = n.parent;
    while (nodes_[static_cast<size_t>(a)].n < min_observations &&
           nodes_[static_cast<size_t>(a)].level > 0) {
      a = nodes_[static_cast<size_t>(a)].parent;
    }
    n.linked_to = a;
    ++linked_;
    changed = true;
  }
  return changed;
}

// Operator 3: greedy, globally most similar pair first; each sibling
// group's best pair is cached and recomputed only when the group changes.
bool ContextTree::merge_similar(const ContextTreeOptions& options, ContextOperatorCounts& counts) {
  struct Best {
    double d = std::numeric_limits<double>::infinity();
    int32_t a = -1, b = -1;
  };
  auto eligible = [&](int32_t c) {
    const ContextNode& n = nodes_[static_cast<size_t>(c)];
    return n.level > 0 && n.linked_to < 0 && n.n >= options.min_observations && is_leaf(c);
  };
  auto best_of = [&](int32_t parent) {
    Best best;
    std::vector<int32_t> cand;
    for (int32_t c : live_children(parent))
      if (eligible(c)) cand.push_back(c);
    for (size_t i = 0; i < cand.size(); ++i)
      for (size_t j = i + 1; j < cand.size(); ++j) {
        const double d =
            distance(nodes_[static_cast<size_t>(cand[i])], nodes_[static_cast<size_t>(cand[j])]);
        if (d < best.d) best = {d, cand[i], cand[j]};
      }
    return best;
  };
  size_t leaf_count = leaves().size();
  std::vector<std::pair<int32_t, Best>> groups;
  for (size_t i = 1; i < nodes_.size(); ++i) {
    if (nodes_[i].removed || nodes_[i].level < 0) continue;
    Best b = best_of(static_cast<int32_t>(i));
    if (b.a >= 0) groups.emplace_back(static_cast<int32_t>(i), b);
  }
  bool changed = false;
  while (options.max_leaves == 0 || leaf_count > options.max_leaves) {
    auto it = std::min_element(groups.begin(), groups.end(), [](const auto& x, const auto& y) {
      return x.second.d < y.second.d;
    });
    if (it == groups.end() || it->second.d > options.similarity) break;
    ContextNode& a = nodes_[static_cast<size_t>(it->second.a)];
    ContextNode& b = nodes_[static_cast<size_t>(it->second.b)];
    a.members.insert(a.members.end(), b.members.begin(), b.members.end());
    a.merged += b.merged;
    remove(b);
    compute_stats(a);
    ++counts.merged;
    --leaf_count;
    changed = true;
    it->second = best_of(it->first);
  }
  return changed;
}

ContextOperatorCounts ContextTree::apply_operators(const ContextTreeOptions& options) {
  ContextOperatorCounts counts;
  removed_ = linked_ = 0;
  for (bool changed = true; changed;) {
    ++counts.rounds;
    changed = remove_only_children();
    changed |= link_small_leaves(options.min_observations);
    changed |= merge_similar(options, counts);
  }
  counts.removed = removed_;
  counts.linked = linked_;
  return counts;
}

ContextModelSummary ContextTree::summarize(uint32_t op) const {
  ContextModelSummary s;
  s.leaves_per_level.assign(kContextLevels, 0);
  std::set<int32_t> entities;
  double sd_sum = 0, bimodal = 0;
  for (int32_t leaf : leaves()) {
    if (op != kNoContext && operation_of(leaf) != op) continue;
    const ContextNode& n = nodes_[static_cast<size_t>(leaf)];
    const ContextNode& e = nodes_[static_cast<size_t>(entity(leaf))];
    ++s.leaves;
    ++s.leaves_per_level[static_cast<size_t>(n.level)];
    s.linked_leaves += n.linked_to >= 0;
    entities.insert(entity(leaf));
    s.observations += n.n;
    sd_sum += static_cast<double>(n.n) * e.sd;
    if (e.n >= kMinBimodalitySample && e.bimodality > kBimodalityThreshold) {
      bimodal += static_cast<double>(n.n);
    }
  }
  s.entities = entities.size();
  double op_sd_sum = 0;
  for (const ContextNode& n : nodes_) {
    if (n.level == 0 && (op == kNoContext || n.context == op)) {
      op_sd_sum += static_cast<double>(n.n) * n.sd;
    }
  }
  const double total = static_cast<double>(s.observations);
  if (total > 0) {
    s.weighted_sd = sd_sum / total;
    s.bimodal_percent = 100.0 * bimodal / total;
    s.reduction_percent = reduction_percent(op_sd_sum / total, s.weighted_sd);
  }
  return s;
}

}  // namespace sonde::analysis
