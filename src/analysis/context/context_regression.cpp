#include "analysis/context/context_regression.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "analysis/context/context_moments.hpp"
#include "stats/rank_test.hpp"

namespace sonde::analysis {
namespace {

// Per tested unit: new executions by the baseline reference whose sample
// they are compared with (one stratum each).
using Strata = std::map<uint32_t, std::vector<int64_t>>;

// Tests each unit (its strata combined), then adjusts over the list. Units
// are keyed by their reporting reference; `leaf_label` names leaf units.
template <typename Key>
std::vector<ContextChange> judge(const ContextBaseline& b, std::map<Key, Strata>& groups,
                                 const RegressionOptions& o,
                                 const std::function<void(const Key&, ContextChange&)>& name) {
  std::vector<ContextChange> out;
  std::vector<size_t> tested;
  std::vector<double> p;
  std::vector<stats::RankSums> sums;
  for (auto& [key, strata] : groups) {
    ContextChange c;
    name(key, c);
    c.strata = strata.size();
    sums.clear();
    // Medians weighted by the new executions per leaf, on both sides, so a
    // different mix of leaves does not show as a change.
    double new_weighted = 0, base_weighted = 0;
    for (auto& [leaf, values] : strata) {
      const BaselineReference& ref = b.references[leaf];
      sums.push_back(stats::rank_sums(values, ref.sample));
      c.n += values.size();
      c.baseline_n += ref.n;
      const auto w = static_cast<double>(values.size());
      new_weighted += w * quartiles(values).median;
      base_weighted += w * ref.median;
    }
    const stats::RankTestResult r = stats::stratified_rank_test(sums);
    c.median = new_weighted / static_cast<double>(c.n);
    c.baseline_median = base_weighted / static_cast<double>(c.n);
    c.change_percent =
        c.baseline_median > 0 ? 100.0 * (c.median - c.baseline_median) / c.baseline_median : 0.0;
    c.common_language = r.common_language;
    c.p = r.p_two_sided;
    if (c.n >= o.min_executions && c.baseline_n >= o.min_executions) {
      tested.push_back(out.size());
      p.push_back(c.p);
      c.verdict = ChangeVerdict::kUnchanged;
    }
    out.push_back(c);
  }
  const std::vector<double> adjusted = stats::holm_adjust(p);
  for (size_t k = 0; k < tested.size(); ++k) {
    ContextChange& c = out[tested[k]];
    c.p_adjusted = adjusted[k];
    if (c.p_adjusted >= o.alpha) continue;
    // The test and the medians must agree on the direction.
    if (c.change_percent >= o.min_change_percent && c.common_language > 0.5) {
      c.verdict = ChangeVerdict::kSlower;
    } else if (c.change_percent <= -o.min_change_percent && c.common_language < 0.5) {
      c.verdict = ChangeVerdict::kFaster;
    }
  }
  // Biggest slowdowns first.
  std::stable_sort(out.begin(), out.end(), [](const ContextChange& x, const ContextChange& y) {
    return x.change_percent > y.change_percent;
  });
  return out;
}

}  // namespace

const char* to_string(ChangeVerdict v) {
  switch (v) {
    case ChangeVerdict::kSlower:
      return "slower";
    case ChangeVerdict::kFaster:
      return "faster";
    case ChangeVerdict::kUnchanged:
      return "unchanged";
    case ChangeVerdict::kTooFew:
      return "too few";
  }
  return "?";
}

size_t RegressionReport::count(const std::vector<ContextChange>& list, ChangeVerdict v) {
  return static_cast<size_t>(std::count_if(list.begin(), list.end(),
                                           [v](const ContextChange& c) { return c.verdict == v; }));
}

size_t RegressionReport::slower() const {
  return count(contexts, ChangeVerdict::kSlower) + count(leaves, ChangeVerdict::kSlower);
}

RegressionReport compare_with_baseline(const ContextBaseline& b, const ContextData& data,
                                       const RegressionOptions& options) {
  RegressionReport report;
  report.options = options;
  report.executions = data.observations.size();
  // A baseline leaf that stands for several trace contexts (the model merged
  // them) is also tested per trace context of the new log against it.
  std::unordered_map<uint64_t, uint32_t> leaf_of;
  std::vector<uint32_t> trace_contexts_of_leaf(b.references.size(), 0);
  for (const BaselineTraceContext& t : b.trace_contexts) {
    leaf_of[t.key] = t.reference;
    ++trace_contexts_of_leaf[t.reference];  // in range: checked when the model is read
  }
  std::unordered_map<std::string_view, uint32_t> operation_ref;
  for (size_t i = 0; i < b.operation_names.size(); ++i) {
    operation_ref[b.operation_names[i]] = b.operation_reference[i];
  }
  // Resolved once per context of the new log, not per execution.
  const ContextKeys keys(data);
  const auto& trace_keys = keys.keys[static_cast<size_t>(ContextLevel::kTrace)];
  std::vector<int64_t> trace_ref(trace_keys.size(), -1);
  std::vector<bool> in_merged_leaf(trace_keys.size(), false);
  for (size_t t = 0; t < trace_keys.size(); ++t) {
    if (auto it = leaf_of.find(trace_keys[t]); it != leaf_of.end()) {
      trace_ref[t] = it->second;
      in_merged_leaf[t] = trace_contexts_of_leaf[it->second] > 1;
    }
  }
  std::vector<int64_t> op_ref(data.operations.size(), -1);
  for (size_t i = 0; i < data.operations.size(); ++i) {
    if (auto it = operation_ref.find(data.operations[i]); it != operation_ref.end()) {
      op_ref[i] = it->second;
    }
  }
  std::vector<uint64_t> unknown(data.operations.size(), 0), new_contexts(data.operations.size(), 0);
  std::map<uint32_t, Strata> by_context, by_operation;
  std::map<std::pair<uint32_t, uint32_t>, Strata> by_leaf;  // (leaf, new trace context)
  for (const ContextObservation& o : data.observations) {
    if (op_ref[o.op] < 0) {
      ++unknown[o.op];
      continue;
    }
    const auto op = static_cast<uint32_t>(op_ref[o.op]);
    by_operation[op][op].push_back(o.duration);
    if (trace_ref[o.trace] >= 0) {
      const auto leaf = static_cast<uint32_t>(trace_ref[o.trace]);
      by_context[b.references[leaf].entity][leaf].push_back(o.duration);
      if (in_merged_leaf[o.trace]) by_leaf[{leaf, o.trace}][leaf].push_back(o.duration);
    } else {
      ++new_contexts[o.op];
    }
  }
  for (size_t i = 0; i < data.operations.size(); ++i) {
    report.in_unknown_operations += unknown[i];
    if (unknown[i] > 0) report.unknown_operations.push_back(data.operations[i]);
    report.in_new_contexts += new_contexts[i];
    if (new_contexts[i] > 0)
      report.new_contexts_by_operation.emplace_back(data.operations[i], new_contexts[i]);
  }
  std::stable_sort(report.new_contexts_by_operation.begin(), report.new_contexts_by_operation.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  report.in_known_contexts =
      report.executions - report.in_new_contexts - report.in_unknown_operations;
  const std::function<void(const uint32_t&, ContextChange&)> by_reference =
      [](const uint32_t& ref, ContextChange& c) { c.reference = ref; };
  report.contexts = judge(b, by_context, options, by_reference);
  report.operations = judge(b, by_operation, options, by_reference);
  const std::function<void(const std::pair<uint32_t, uint32_t>&, ContextChange&)> by_trace =
      [&data](const std::pair<uint32_t, uint32_t>& key, ContextChange& c) {
        c.reference = key.first;
        const uint32_t t = key.second;
        c.leaf = data.describe(ContextLevel::kStack, data.trace_stack[t]) + " @ shape " +
                 std::to_string(data.trace_shape[t]) + " position " +
                 std::to_string(data.trace_position[t]);
      };
  report.leaves = judge(b, by_leaf, options, by_trace);
  return report;
}

}  // namespace sonde::analysis
