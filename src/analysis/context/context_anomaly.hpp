// Context-aware anomaly detection: each execution is scored against the
// distribution of its model context (the CCT leaf's entity) with a robust
// Tukey-style fence, and — for comparison — against its whole operation:
//   score = (x - Q3) / s,   s = max(IQR, 5 % of the median, 1 ns)
// An execution is an alarm when score > threshold (default 3: Tukey's
// "far out"). Scores use median/quartiles, not mean/σ, because response
// times have heavy tails. On a workload whose timing depends on context,
// the per-operation fence flags the executions of slow-but-normal contexts;
// the per-context fence does not — the difference is the false alarms the
// model avoids.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/context/context_tree.hpp"

namespace sonde::analysis {

struct ScoredExecution {
  size_t observation = 0;      // index into ContextData::observations
  int32_t entity = -1;         // CCT node the execution was scored against
  double score = 0;            // against its context
  double operation_score = 0;  // against its whole operation
};

struct TraceAnomaly {
  int64_t trace_id = 0;
  uint64_t alarms = 0;
  double max_score = 0;
};

struct AnomalyReport {
  double threshold = 3;
  uint64_t context_alarms = 0;    // score > threshold
  uint64_t operation_alarms = 0;  // operation_score > threshold
  uint64_t both = 0;
  std::vector<ScoredExecution> top;  // highest context scores first
  std::vector<TraceAnomaly> traces;  // traces with alarms, most alarms first
};

double anomaly_score(const ContextNode& distribution, int64_t duration);

AnomalyReport detect_anomalies(const ContextData& data, const ContextTree& tree,
                               double threshold = 3, size_t top = 20);

}  // namespace sonde::analysis
