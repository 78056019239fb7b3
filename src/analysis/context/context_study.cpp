#include "analysis/context/context_study.hpp"

#include <random>
#include <unordered_map>

#include "analysis/context/context_collector.hpp"
#include "analysis/context/context_moments.hpp"

namespace sonde::analysis {
namespace {

// Interns keys to dense ids and accumulates one Moments per id.
template <typename Map, typename Key>
Moments& slot(Map& map, std::vector<Moments>& moments, const Key& key, uint32_t* id) {
  auto [it, inserted] = map.try_emplace(key, static_cast<uint32_t>(moments.size()));
  if (inserted) moments.emplace_back();
  *id = it->second;
  return moments[it->second];
}

double weighted(const std::vector<Moments>& classes, uint64_t n) {
  double sum = 0;
  for (const Moments& m : classes) sum += static_cast<double>(m.n) * m.population_sd();
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

}  // namespace

ProjectionResult project_instrumentation(const ContextData& data,
                                         const std::vector<bool>& monitored) {
  std::vector<Moments> op_m(data.operations.size());
  std::vector<Moments> caller_m, stack_m, trace_m;
  std::unordered_map<uint64_t, uint32_t> callers, stacks;
  std::unordered_map<std::vector<uint32_t>, uint32_t, U32VectorHash> shapes;
  std::vector<int32_t> projected_parent, new_pos;  // per original position
  std::vector<uint32_t> kept, stack_of, key;       // per projected position
  ProjectionResult r;

  for (const TraceShape& shape : data.shapes) {
    const size_t n = shape.ops.size();
    projected_parent.assign(n, -1);
    new_pos.assign(n, -1);
    kept.clear();
    key.clear();
    for (size_t i = 0; i < n; ++i) {
      // Nearest monitored ancestor: the parent's own, if the parent vanished.
      const int32_t p = shape.parent[i];
      const int32_t up =
          p < 0 ? -1
                : (new_pos[static_cast<size_t>(p)] >= 0 ? p
                                                        : projected_parent[static_cast<size_t>(p)]);
      projected_parent[i] = up;
      if (!monitored[shape.ops[i]]) continue;
      new_pos[i] = static_cast<int32_t>(kept.size());
      kept.push_back(static_cast<uint32_t>(i));
      const int32_t np = up < 0 ? -1 : new_pos[static_cast<size_t>(up)];
      key.push_back(shape.ops[i]);
      key.push_back(static_cast<uint32_t>(np + 1));
    }
    if (kept.empty()) continue;
    r.traces += shape.traces;
    uint32_t projected_shape = 0;
    {
      auto [it, inserted] = shapes.try_emplace(key, static_cast<uint32_t>(trace_m.size()));
      if (inserted) trace_m.resize(trace_m.size() + kept.size());
      projected_shape = it->second;  // its positions are projected_shape + j
    }
    stack_of.assign(kept.size(), 0);
    for (size_t j = 0; j < kept.size(); ++j) {
      const size_t i = kept[j];
      const Moments& m = shape.moments[i];
      const uint32_t op = shape.ops[i];
      const int32_t up = projected_parent[i];
      const uint32_t caller_op = up < 0 ? kNoContext : shape.ops[static_cast<size_t>(up)];
      const uint32_t parent_stack =
          up < 0 ? kNoContext : stack_of[static_cast<size_t>(new_pos[static_cast<size_t>(up)])];
      uint32_t id = 0;
      slot(callers, caller_m, context_pair_key(op, caller_op), &id).merge(m);
      slot(stacks, stack_m, context_pair_key(op, parent_stack), &id).merge(m);
      stack_of[j] = id;
      trace_m[projected_shape + j].merge(m);
      op_m[op].merge(m);
      r.executions += m.n;
    }
  }
  size_t ops = 0;
  for (const Moments& m : op_m) ops += m.n > 0;
  r.contexts = {ops, caller_m.size(), stack_m.size(), trace_m.size()};
  r.weighted_sd = {weighted(op_m, r.executions), weighted(caller_m, r.executions),
                   weighted(stack_m, r.executions), weighted(trace_m, r.executions)};
  for (size_t l = 0; l < kContextLevels; ++l)
    r.reduction_percent[l] = reduction_percent(r.weighted_sd[0], r.weighted_sd[l]);
  return r;
}

std::vector<StudyRow> run_study(const ContextData& data, size_t runs, uint64_t seed) {
  const size_t ops = data.operations.size();
  std::mt19937_64 rng(seed);
  // Unbiased draw in [0, bound) by rejection (bound > 0).
  auto below = [&rng](uint64_t bound) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do x = rng();
    while (x >= limit);
    return x % bound;
  };
  std::vector<StudyRow> rows;
  rows.reserve(ops * runs);
  std::vector<uint32_t> perm(ops);
  std::vector<bool> monitored(ops);
  for (size_t k = 1; k <= ops; ++k) {
    for (size_t run = 0; run < runs; ++run) {
      for (uint32_t i = 0; i < ops; ++i) perm[i] = i;
      // The first k entries of a partial Fisher-Yates shuffle: a uniform k-subset.
      for (size_t i = 0; i < k; ++i) std::swap(perm[i], perm[i + below(ops - i)]);
      monitored.assign(ops, false);
      for (size_t i = 0; i < k; ++i) monitored[perm[i]] = true;
      rows.push_back({k, run, project_instrumentation(data, monitored)});
    }
  }
  return rows;
}

}  // namespace sonde::analysis
