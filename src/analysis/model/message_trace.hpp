// A trace as the messages between its executions: a synchronous call when
// an execution starts (at its tin) and a reply when it returns (at its
// tout), from the virtual 'Entry' for the trace's roots. This is Kieker's
// MessageTrace, which its sequence diagrams, dependency graphs and
// messageTraces.txt are drawn from. Derived from eoi/ess alone, like
// Kieker's ExecutionTrace.toMessageTrace, without recursion.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

// Sender/receiver of 'Entry'.
inline constexpr int32_t kEntryExecution = -1;

struct TraceMessage {
  bool call = true;                    // a call, or the reply to one
  int64_t timestamp = 0;               // callee's tin for a call, its tout for a reply
  int32_t sender = kEntryExecution;    // index into trace.executions
  int32_t receiver = kEntryExecution;  // index into trace.executions
};

// Calls and replies in the order they happen: call, nested calls and their
// replies, reply. Expects executions in eoi order with consistent ess (a
// valid trace); an ess that jumps by more than one takes the closest open
// caller.
std::vector<TraceMessage> message_sequence(const Trace& trace);

}  // namespace sonde::analysis
