#include "analysis/context_regression.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/rank_test.hpp"

namespace sonde::analysis {
namespace {

double median_of(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = static_cast<double>(v[mid]);
  if (v.size() % 2 == 1) return hi;
  const double lo = static_cast<double>(
      *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
  return (lo + hi) / 2;
}

// Tests each group against its reference, then adjusts over the list.
std::vector<ContextChange> judge(const ContextBaseline& b,
                                 std::map<std::pair<uint32_t, bool>, std::vector<int64_t>>& groups,
                                 const RegressionOptions& o) {
  std::vector<ContextChange> out;
  std::vector<size_t> tested;
  std::vector<double> p;
  for (auto& [key, values] : groups) {
    const BaselineReference& ref = b.references[key.first];
    ContextChange c;
    c.reference = key.first;
    c.new_contexts = key.second;
    c.n = values.size();
    const RankTestResult r = mann_whitney(values, ref.sample);
    c.median = median_of(values);
    c.change_percent = ref.median > 0 ? 100.0 * (c.median - ref.median) / ref.median : 0.0;
    c.common_language = r.common_language;
    c.p = r.p_two_sided;
    if (c.n >= o.min_executions && ref.n >= o.min_executions) {
      tested.push_back(out.size());
      p.push_back(c.p);
      c.verdict = ChangeVerdict::kUnchanged;
    }
    out.push_back(c);
  }
  const std::vector<double> adjusted = holm_adjust(p);
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

RegressionReport compare_with_baseline(const ContextBaseline& b, const ContextData& data,
                                       const RegressionOptions& options) {
  RegressionReport report;
  report.options = options;
  report.executions = data.observations.size();
  std::array<std::unordered_map<uint64_t, uint32_t>, kContextLevels> leaf_of;
  for (const BaselineLeaf& l : b.leaves) leaf_of[static_cast<size_t>(l.level)][l.key] = l.reference;
  std::unordered_map<std::string_view, uint32_t> operation_ref;
  for (size_t i = 0; i < b.operation_names.size(); ++i) {
    operation_ref[b.operation_names[i]] = b.operation_reference[i];
  }
  const ContextKeys keys(data);
  // Per context id of each level of the new log: the baseline reference of
  // its leaf, resolved once per context rather than per execution.
  std::array<std::vector<int64_t>, kContextLevels> ref_of;
  for (int l = 0; l < kContextLevels; ++l) {
    const auto& k = keys.keys[static_cast<size_t>(l)];
    auto& r = ref_of[static_cast<size_t>(l)];
    r.assign(k.size(), -1);
    for (size_t id = 0; id < k.size(); ++id) {
      if (auto it = leaf_of[static_cast<size_t>(l)].find(k[id]);
          it != leaf_of[static_cast<size_t>(l)].end()) {
        r[id] = it->second;
      }
    }
  }
  std::vector<int64_t> op_ref(data.operations.size(), -1);
  std::vector<bool> op_unknown_listed(data.operations.size(), false);
  for (size_t i = 0; i < data.operations.size(); ++i) {
    if (auto it = operation_ref.find(data.operations[i]); it != operation_ref.end())
      op_ref[i] = it->second;
  }

  std::map<std::pair<uint32_t, bool>, std::vector<int64_t>> by_context, by_operation;
  for (const ContextObservation& o : data.observations) {
    if (op_ref[o.op] < 0) {
      ++report.in_unknown_operations;
      if (!op_unknown_listed[o.op]) {
        op_unknown_listed[o.op] = true;
        report.unknown_operations.push_back(data.operations[o.op]);
      }
      continue;
    }
    const auto op_reference = static_cast<uint32_t>(op_ref[o.op]);
    by_operation[{op_reference, false}].push_back(o.duration);
    int64_t ref = ref_of[3][o.trace];
    if (ref < 0) ref = ref_of[2][o.stack];
    if (ref < 0) ref = ref_of[1][o.caller];
    if (ref < 0) ref = ref_of[0][o.op];
    if (ref >= 0) {
      ++report.in_known_contexts;
      by_context[{static_cast<uint32_t>(ref), false}].push_back(o.duration);
    } else {
      ++report.in_new_contexts;
      by_context[{op_reference, true}].push_back(o.duration);
    }
  }
  report.contexts = judge(b, by_context, options);
  report.operations = judge(b, by_operation, options);
  return report;
}

}  // namespace sonde::analysis
