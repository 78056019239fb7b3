#include "analysis/kieker/sequence_diagram.hpp"

#include <unordered_map>

namespace sonde::analysis {

SequenceDiagram sequence_diagram(const KiekerTrace& trace, const KiekerSystemModel& model,
                                 AggregationLevel level, bool short_labels) {
  const bool deployment = level == AggregationLevel::kDeployment;
  SequenceDiagram d;
  d.trace_id = trace.trace->trace_id;
  d.participants.push_back({kKiekerRootId, "", ""});
  std::unordered_map<int32_t, size_t> index = {{kKiekerRootId, 0}};
  const auto participant = [&](int32_t execution) -> size_t {
    if (execution == kEntryExecution) return 0;
    const KiekerEntityIds& ids = trace.executions[static_cast<size_t>(execution)].ids;
    const int32_t id = deployment ? ids.allocation : ids.assembly;
    auto [it, inserted] = index.try_emplace(id, d.participants.size());
    if (inserted) {
      d.participants.push_back({id, deployment ? model.container_name(ids.container) + "::" : "",
                                kieker_component_label(model, ids.assembly, short_labels)});
    }
    return it->second;
  };
  for (const TraceMessage& m : trace.messages) {
    SequenceMessage s;
    s.call = m.call;
    s.from = participant(m.sender);
    s.to = participant(m.receiver);
    if (m.call) {
      const KiekerExecution& callee = trace.executions[static_cast<size_t>(m.receiver)];
      s.label = kieker_operation_label(model.operation_signature(callee.ids.operation));
    }
    d.messages.push_back(std::move(s));
  }
  return d;
}

}  // namespace sonde::analysis
