#include "analysis/context/context_anomaly.hpp"

#include <algorithm>
#include <unordered_map>

#include "format/context_fences.hpp"

namespace sonde::analysis {

double anomaly_score(const ContextNode& d, int64_t duration) {
  // One formula for `sonde context --anomalies` and the flight recorder's
  // context trigger (format/context_fences.hpp).
  const format::ContextFence fence =
      format::make_context_fence(d.quartiles.q1, d.quartiles.median, d.quartiles.q3, 0);
  return format::context_score(fence, static_cast<double>(duration));
}

AnomalyReport detect_anomalies(const ContextData& data, const ContextTree& tree, double threshold,
                               size_t top) {
  AnomalyReport report;
  report.threshold = threshold;
  const auto& nodes = tree.nodes();
  // Model entity of every trace context (the leaves partition them), and
  // the node of every operation.
  std::vector<int32_t> entity_of(data.contexts(ContextLevel::kTrace), -1);
  for (int32_t leaf : tree.leaves())
    for (uint32_t t : nodes[static_cast<size_t>(leaf)].members) entity_of[t] = tree.entity(leaf);
  std::vector<int32_t> op_node(data.operations.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].level == static_cast<int>(ContextLevel::kOperation)) {
      op_node[nodes[i].context] = static_cast<int32_t>(i);
    }

  std::vector<ScoredExecution> scored;
  std::unordered_map<int64_t, TraceAnomaly> traces;
  for (size_t i = 0; i < data.observations.size(); ++i) {
    const ContextObservation& o = data.observations[i];
    ScoredExecution s{i, entity_of[o.trace], 0, 0};
    s.score = anomaly_score(nodes[static_cast<size_t>(s.entity)], o.duration);
    s.operation_score = anomaly_score(nodes[static_cast<size_t>(op_node[o.op])], o.duration);
    const bool alarm = s.score > threshold;
    const bool op_alarm = s.operation_score > threshold;
    report.context_alarms += alarm;
    report.operation_alarms += op_alarm;
    report.both += alarm && op_alarm;
    if (alarm) {
      TraceAnomaly& t = traces[o.trace_id];
      t.trace_id = o.trace_id;
      ++t.alarms;
      t.max_score = std::max(t.max_score, s.score);
      scored.push_back(s);
    }
  }
  auto by_score = [](const ScoredExecution& a, const ScoredExecution& b) {
    return a.score != b.score ? a.score > b.score : a.observation < b.observation;
  };
  const size_t keep = std::min(top, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep),
                    scored.end(), by_score);
  scored.resize(keep);
  report.top = std::move(scored);
  for (auto& [id, t] : traces) report.traces.push_back(t);
  std::sort(report.traces.begin(), report.traces.end(), [](const auto& a, const auto& b) {
    if (a.alarms != b.alarms) return a.alarms > b.alarms;
    if (a.max_score != b.max_score) return a.max_score > b.max_score;
    return a.trace_id < b.trace_id;
  });
  if (report.traces.size() > top) report.traces.resize(top);
  return report;
}

}  // namespace sonde::analysis
