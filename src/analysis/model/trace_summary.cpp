#include "analysis/model/trace_summary.hpp"

#include <algorithm>

namespace sonde::analysis {

void TraceSummaryCollector::on_trace(const Trace& trace) {
  ++counts_.valid;
  bool repaired = false;
  for (const Execution& e : trace.executions) {
    ++counts_.executions;
    if (e.failed) ++counts_.failed_executions;
    repaired = repaired || e.repaired;
    counts_.max_depth = std::max(counts_.max_depth, e.ess + 1);
  }
  if (repaired) ++counts_.repaired_traces;
  durations_.add(trace.duration());
}

void TraceSummaryCollector::on_invalid_trace(const InvalidTrace& trace) {
  ++counts_.invalid;
  ++counts_.invalid_closed_by[static_cast<size_t>(trace.closed_by)];
  if (trace.problems.empty()) return;
  const TraceProblem& main = trace.problems.front();
  auto it = std::find_if(counts_.problems.begin(), counts_.problems.end(),
                         [&](const ProblemCount& p) { return p.kind == main.kind; });
  if (it == counts_.problems.end()) {
    counts_.problems.push_back({main.kind, 0, main.detail, trace.trace_id});
    it = counts_.problems.end() - 1;
  }
  ++it->traces;
}

TraceCounts TraceSummaryCollector::results() const {
  TraceCounts out = counts_;
  std::stable_sort(
      out.problems.begin(), out.problems.end(),
      [](const ProblemCount& a, const ProblemCount& b) { return a.traces > b.traces; });
  out.durations = durations_.summary();
  return out;
}

}  // namespace sonde::analysis
