#include "analysis/model/message_trace.hpp"

namespace sonde::analysis {

std::vector<TraceMessage> message_sequence(const Trace& trace) {
  const auto& executions = trace.executions;
  std::vector<TraceMessage> messages;
  messages.reserve(executions.size() * 2);
  // Open calls: the executions that have not returned yet, outermost first.
  std::vector<int32_t> open;
  const auto reply_from_top = [&] {
    const int32_t callee = open.back();
    open.pop_back();
    const int32_t caller = open.empty() ? kEntryExecution : open.back();
    messages.push_back({false, executions[static_cast<size_t>(callee)].tout, callee, caller});
  };
  for (size_t i = 0; i < executions.size(); ++i) {
    const int32_t ess = executions[i].ess;
    const size_t depth = ess < 0 ? 0 : static_cast<size_t>(ess);
    while (open.size() > depth) reply_from_top();
    const int32_t caller = open.empty() ? kEntryExecution : open.back();
    messages.push_back({true, executions[i].tin, caller, static_cast<int32_t>(i)});
    open.push_back(static_cast<int32_t>(i));
  }
  while (!open.empty()) reply_from_top();
  return messages;
}

}  // namespace sonde::analysis
