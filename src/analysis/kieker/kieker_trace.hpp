// A trace with Kieker's numbers attached to each execution: the container,
// components, operation and pairs of the system model, and whether Kieker
// would call the execution "assumed". Every Kieker-format output prints from
// this view; it refers to the Trace and is only valid while that lives.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/kieker/kieker_system_model.hpp"
#include "analysis/model/message_trace.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct KiekerExecution {
  const Execution* execution = nullptr;
  KiekerEntityIds ids;
  int32_t assembly_pair = kKiekerRootId;
  int32_t allocation_pair = kKiekerRootId;
  // Kieker marks an execution of a flow-event trace "assumed" unless a
  // CallOperationEvent proves the call (Execution::assumed): with only
  // Before/After events, every execution below the trace's root is assumed.
  bool assumed = false;
};

struct KiekerTrace {
  const Trace* trace = nullptr;
  std::vector<KiekerExecution> executions;  // eoi order, as trace->executions
  std::vector<TraceMessage> messages;       // message_sequence(*trace)
  int32_t max_ess = -1;
};

struct KiekerTraceOptions {
  // Kieker's --ignore-assumed-calls: treat assumed calls as certain ones.
  bool ignore_assumed_calls = false;
};

// Numbers the trace's entities in `model`, registering the new ones as
// Kieker does for a trace of this origin: for flow events in the order the
// executions return (callees before callers); for OperationExecutionRecords
// (normally registered already by KiekerRecordFilter) in order of exit time.
KiekerTrace resolve_kieker_trace(const Trace& trace, KiekerSystemModel& model,
                                 const KiekerTraceOptions& options = {});

}  // namespace sonde::analysis
