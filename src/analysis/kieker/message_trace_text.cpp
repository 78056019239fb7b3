#include "analysis/kieker/message_trace_text.hpp"

#include "analysis/kieker/execution_trace_text.hpp"

namespace sonde::analysis {

std::string message_trace_text(const KiekerTrace& trace, const KiekerSystemModel& model) {
  const auto side = [&](int32_t execution) {
    return execution == kEntryExecution
               ? std::string("'Entry'")
               : execution_text(trace, static_cast<size_t>(execution), model);
  };
  std::string out = "Trace " + std::to_string(trace.trace->trace_id) + ":\n";
  for (const TraceMessage& m : trace.messages) {
    out += m.call ? "<SYNC-CALL " : "<SYNC-RPLY ";
    out += std::to_string(m.timestamp) + " " + side(m.sender) + " --> " + side(m.receiver) + ">\n";
  }
  return out;
}

}  // namespace sonde::analysis
