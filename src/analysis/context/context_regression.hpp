// Regression check of a log against a saved context model
// (context_baseline.hpp): per model entity, a two-sided rank test of the
// new executions against the baseline's - Mann-Whitney U per leaf, the
// entity's leaves combined as strata (van Elteren) - Holm-adjusted over all
// entities tested, and a practical threshold on the median change. The
// same check per whole operation (no context) runs alongside, so the report
// shows what context adds: a slowdown confined to one caller or one trace
// position is often invisible in the operation's overall distribution.
// A model leaf that stands for several trace contexts (they behaved alike
// in the baseline, so the model merged them) is also tested per trace
// context of the new log against the leaf's sample, so a change confined
// to one of them is named rather than diluted by its unchanged siblings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/context/context_baseline.hpp"
#include "analysis/context/context_data.hpp"

namespace sonde::analysis {

struct RegressionOptions {
  double alpha = 0.01;             // family-wise, after Holm
  double min_change_percent = 10;  // |median change| needed to call a change
  uint64_t min_executions = 10;    // per side, to test at all
};

enum class ChangeVerdict { kSlower, kFaster, kUnchanged, kTooFew };
const char* to_string(ChangeVerdict v);

struct ContextChange {
  uint32_t reference = 0;   // the model entity (or operation) in ContextBaseline::references
  std::string leaf;         // leaf tests: the new log's trace context (stack @ shape position)
  size_t strata = 0;        // its leaves that have new executions
  uint64_t n = 0;           // new executions
  uint64_t baseline_n = 0;  // baseline executions of those leaves
  // Leaf medians averaged with the new executions per leaf as weights, new
  // and baseline alike (one leaf: its plain medians), ns.
  double median = 0, baseline_median = 0;
  double change_percent = 0;   // median against baseline_median
  double common_language = 0;  // P(new > baseline) + P(equal)/2
  double p = 1;                // two-sided, raw
  double p_adjusted = 1;       // Holm over the list it is in
  ChangeVerdict verdict = ChangeVerdict::kTooFew;
};

struct RegressionReport {
  RegressionOptions options;
  std::vector<ContextChange> contexts;    // model entities
  std::vector<ContextChange> leaves;      // trace contexts within leaves that merge several
  std::vector<ContextChange> operations;  // whole operations, no context
  uint64_t executions = 0;
  uint64_t in_known_contexts = 0;
  // Not compared: executions in trace contexts the baseline never saw (per
  // operation, most first) and in operations it does not know.
  uint64_t in_new_contexts = 0;
  std::vector<std::pair<std::string, uint64_t>> new_contexts_by_operation;
  uint64_t in_unknown_operations = 0;
  std::vector<std::string> unknown_operations;

  static size_t count(const std::vector<ContextChange>& list, ChangeVerdict v);
  // Slower model entities plus slower leaves (what --fail-on-regression gates on).
  size_t slower() const;
};

RegressionReport compare_with_baseline(const ContextBaseline& baseline, const ContextData& data,
                                       const RegressionOptions& options);

}  // namespace sonde::analysis
