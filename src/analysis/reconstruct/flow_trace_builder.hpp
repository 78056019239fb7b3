// Turns one trace's flow events, in order-index order, into executions, with
// the semantics of Kieker's TraceEventRecords2ExecutionAndMessageTrace
// filter/stage (docs/formats/kieker-call-events.md has the rules and the
// cases):
// - a before event opens an execution (eoi: the next number; ess: the
//   executions open), unless the event just before it is the call event of
//   the same callee: then it completes the execution that call opened;
// - a call event opens an execution of its callee at once: a callee that
//   records no events of its own (not instrumented) is an "assumed"
//   execution from the call's time until the caller's next event (its after
//   event, its next call, or its next before event) closes it together with
//   every open call above it;
// - calls still open at the end close at the time of the newest of them;
// - a trace that begins with a call has no execution for that call's
//   caller: the callee is the root.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/event_trace_buffer.hpp"

namespace sonde::analysis {

class FlowTraceBuilder {
 public:
  // `repair`: an after event that closes a before deeper in the stack
  // closes everything above it at its own time (Kieker's
  // --repair-event-based-traces); without it that is a mismatch.
  FlowTraceBuilder(Trace& trace, std::vector<TraceProblem>& problems, bool repair);
  ~FlowTraceBuilder();
  FlowTraceBuilder(const FlowTraceBuilder&) = delete;
  FlowTraceBuilder& operator=(const FlowTraceBuilder&) = delete;

  // The next event in order-index order (duplicates already dropped).
  // `event` must outlive the builder.
  void add(const FlowEvent& event);

  // Closes the calls still open; befores still open are closed at
  // `last_timestamp` when `close_open_executions`, else reported missing.
  void finish(bool close_open_executions, int64_t last_timestamp);

 private:
  // An entry of Kieker's event stack: a before event or a call event. A
  // before matched to the call below it shares that call's execution.
  struct Open {
    const FlowEvent* event;
    uint32_t execution;
    bool matched_before;  // a before sitting on its own call
  };

  void on_before(const FlowEvent& e);
  void on_after(const FlowEvent& e);
  void on_call(const FlowEvent& e);
  // Opens an execution for a call's callee or an unmatched before.
  void open_execution(const FlowEvent& e);
  // Kieker's closeOpenCalls: the open calls on top of the stack whose caller
  // is `current`'s operation, and those above them, have returned.
  void close_returned_calls(const FlowEvent& current);
  // Closes stack entries [from, end) at `tout` (calls as assumed, befores as
  // repaired) and removes them.
  void close_entries_above(size_t from, int64_t tout, int32_t exit_order_index);
  bool is_open_call(const Open& o) const { return o.event->kind == FlowEventKind::kCall; }

  Trace& trace_;
  std::vector<TraceProblem>& problems_;
  bool repair_;
  std::vector<Open> stack_;
  // stack_'s memory between builders (one per trace) on this thread: a
  // collector builds hundreds of thousands of traces a second, each of
  // which allocated and freed its stack.
  static thread_local std::vector<Open> spare_stack_;
  int32_t open_executions_ = 0;  // Kieker's execution stack: stack_ minus matched befores
};

// Whether `before` is the callee of `call` as Kieker matches them: the call
// is the event right before it (order index one less), names the same
// class, and the same operation (exactly, or equal apart from the class
// part of the signature: Kieker's "enhanced call detection", for a call
// recorded with the declared type and a before with the runtime class); a
// constructor's before event needs a constructor call.
bool is_call_of(const FlowEvent& call, const FlowEvent& before);

}  // namespace sonde::analysis
