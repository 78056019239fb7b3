#include "cli/context_regression_output.hpp"

#include <cstdio>
#include <string>

#include "analysis/text/duration_format.hpp"
#include "analysis/text/text_table.hpp"

namespace sonde::cli {
namespace {

using analysis::ChangeVerdict;
using analysis::RegressionReport;

nlohmann::json change_json(const analysis::ContextBaseline& b, const analysis::ContextChange& c) {
  const analysis::BaselineReference& ref = b.references[c.reference];
  return {{"verdict", to_string(c.verdict)},
          {"level", c.leaf.empty() ? to_string(ref.level) : "trace"},
          {"operation", ref.operation},
          {"context", c.leaf.empty() ? ref.context : c.leaf},
          {"model_context", ref.context},
          {"leaves", c.strata},
          {"baseline_n", c.baseline_n},
          {"baseline_median_ns", c.baseline_median},
          {"n", c.n},
          {"median_ns", c.median},
          {"change_percent", c.change_percent},
          {"prob_slower", c.common_language},
          {"p_value", c.p},
          {"p_adjusted", c.p_adjusted}};
}

nlohmann::json counts_json(const std::vector<analysis::ContextChange>& list) {
  return {{"slower", RegressionReport::count(list, ChangeVerdict::kSlower)},
          {"faster", RegressionReport::count(list, ChangeVerdict::kFaster)},
          {"unchanged", RegressionReport::count(list, ChangeVerdict::kUnchanged)},
          {"too_few", RegressionReport::count(list, ChangeVerdict::kTooFew)}};
}

std::string fixed(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

nlohmann::json regression_json(const analysis::ContextBaseline& b, const RegressionReport& r) {
  nlohmann::json contexts = nlohmann::json::array(), leaves = nlohmann::json::array(),
                 operations = nlohmann::json::array();
  for (const auto& c : r.contexts) contexts.push_back(change_json(b, c));
  for (const auto& c : r.leaves) leaves.push_back(change_json(b, c));
  for (const auto& c : r.operations) operations.push_back(change_json(b, c));
  nlohmann::json new_contexts = nlohmann::json::array();
  for (const auto& [op, n] : r.new_contexts_by_operation) {
    new_contexts.push_back({{"operation", op}, {"executions", n}});
  }
  return {{"baseline",
           {{"log", b.source},
            {"executions", b.executions},
            {"traces", b.traces},
            {"references", b.references.size()}}},
          {"test",
           "two-sided rank test: per model entity, Mann-Whitney U of each leaf's new executions "
           "against its baseline sample, leaves combined as strata (van Elteren); per "
           "operation and per trace context inside a model leaf that merges several, plain "
           "Mann-Whitney U against that operation's or leaf's sample; Holm-adjusted per list; a "
           "change needs p_adjusted "
           "< alpha and |median change| >= min_change_percent"},
          {"alpha", r.options.alpha},
          {"min_change_percent", r.options.min_change_percent},
          {"min_executions", r.options.min_executions},
          {"executions", r.executions},
          {"in_known_contexts", r.in_known_contexts},
          {"in_new_contexts", r.in_new_contexts},
          {"new_contexts_by_operation", new_contexts},
          {"in_unknown_operations", r.in_unknown_operations},
          {"unknown_operations", r.unknown_operations},
          {"context_counts", counts_json(r.contexts)},
          {"leaf_counts", counts_json(r.leaves)},
          {"operation_counts", counts_json(r.operations)},
          {"contexts", contexts},
          {"leaves", leaves},
          {"operations", operations}};
}

void print_regression(std::ostream& out, const analysis::ContextBaseline& b,
                      const RegressionReport& r, size_t limit) {
  out << "\nRegression check against " << b.source << " (" << b.executions << " executions in "
      << b.traces
      << " traces): two-sided rank test per model context (Mann-Whitney U per leaf, "
         "leaves combined by van Elteren), Holm-adjusted, alpha "
      << r.options.alpha << ", |median change| >= " << r.options.min_change_percent << " %\n";
  analysis::TextTable table(
      {"verdict", "change", "median", "baseline", "n", "p adj.", "tested", "level", "context"});
  size_t shown = 0, changed = 0;
  auto add_changed = [&](const std::vector<analysis::ContextChange>& list, const char* tested) {
    for (const auto& c : list) {
      if (c.verdict != ChangeVerdict::kSlower && c.verdict != ChangeVerdict::kFaster) continue;
      ++changed;
      if (limit != 0 && shown >= limit) continue;
      ++shown;
      const auto& ref = b.references[c.reference];
      table.add_row(
          {to_string(c.verdict), fixed("%+.1f %%", c.change_percent),
           analysis::format_duration(c.median), analysis::format_duration(c.baseline_median),
           std::to_string(c.n), fixed("%.2g", c.p_adjusted), tested,
           c.leaf.empty() ? to_string(ref.level) : "trace", c.leaf.empty() ? ref.context : c.leaf});
    }
  };
  add_changed(r.contexts, "model");
  add_changed(r.leaves, "leaf");
  if (changed == 0) {
    out << "No context changed.\n";
  } else {
    table.write(out);
    if (shown < changed) out << "(" << changed - shown << " more; --json lists all)\n";
  }
  out << "Contexts: " << RegressionReport::count(r.contexts, ChangeVerdict::kSlower) << " slower, "
      << RegressionReport::count(r.contexts, ChangeVerdict::kFaster) << " faster, "
      << RegressionReport::count(r.contexts, ChangeVerdict::kUnchanged) << " unchanged, "
      << RegressionReport::count(r.contexts, ChangeVerdict::kTooFew)
      << " with too few executions.\n"
      << "Trace contexts inside merged model contexts, tested alone: "
      << RegressionReport::count(r.leaves, ChangeVerdict::kSlower) << " slower, "
      << RegressionReport::count(r.leaves, ChangeVerdict::kFaster) << " faster, of "
      << r.leaves.size() << ".\n"
      << "Whole operations (no context): "
      << RegressionReport::count(r.operations, ChangeVerdict::kSlower) << " slower, "
      << RegressionReport::count(r.operations, ChangeVerdict::kFaster) << " faster.\n"
      << "Executions: " << r.in_known_contexts << " compared; not compared: " << r.in_new_contexts
      << " in trace contexts new since the baseline (in " << r.new_contexts_by_operation.size()
      << " operations), " << r.in_unknown_operations << " in " << r.unknown_operations.size()
      << " operations the baseline lacks.\n";
}

}  // namespace sonde::cli
