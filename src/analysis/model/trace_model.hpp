// The one trace model every analysis works on, whichever records it came
// from: flow events (TraceMetadata + Before/After events) or
// OperationExecutionRecords. A Trace is a list of Executions in execution
// order (eoi), each with its stack depth (ess); the call tree follows from
// eoi/ess alone (call_tree.hpp), as in Kieker's ExecutionTrace.
//
// Strings are views into the StringPool of the TraceReconstructor that built
// the trace; they stay valid as long as that pool lives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/w3c_ids.hpp"

namespace sonde::analysis {

// Time arithmetic on what a log says: a hostile or corrupt log's times
// can be any int64, so differences and sums are clamped to the int64 range
// instead of overflowing (undefined behaviour; 292 years of nanoseconds is
// no real duration anyway).
// to - from:
inline int64_t saturating_span(int64_t from, int64_t to) {
  int64_t d = 0;
  if (!__builtin_sub_overflow(to, from, &d)) return d;
  return to > from ? INT64_MAX : INT64_MIN;
}
// a + b:
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t s = 0;
  if (!__builtin_add_overflow(a, b, &s)) return s;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

struct Execution {
  std::string_view operation;  // full operation signature, as recorded
  std::string_view component;  // class signature (flow events) or class parsed from `operation`
  std::string_view host;
  int64_t tin = 0;        // entry timestamp, ns
  int64_t tout = 0;       // exit timestamp, ns; -1 if the exit was never seen (partial traces only)
  int32_t eoi = 0;        // execution order index: 0 for the entry, pre-order
  int32_t ess = 0;        // execution stack size: call depth, 0 for the entry
  bool failed = false;    // left by an exception (AfterOperationFailedEvent)
  bool repaired = false;  // exit synthesised by the repair option (tout is an estimate)
  std::string_view cause;  // failure cause when `failed`
  // Kieker order indexes of the before event that opened this execution and
  // of the after event that closed it (-1: OperationExecutionRecords, or an
  // exit synthesised at the end of input). A continued trace's
  // parentOrderId names an event of its parent trace; these map it back to
  // the execution that was current then (execution_lookup.hpp).
  int32_t order_index = -1;
  int32_t exit_order_index = -1;
  // Flow events: no CallOperationEvent recorded this call, as Kieker marks
  // it "assumed" (a callee's before event without its call, below the
  // root; or a call whose callee recorded no events, its times the call's
  // and the caller's next event's). False for OperationExecutionRecords.
  bool assumed = false;
  // Flow events: known only from a call event, the callee recorded none.
  bool call_only = false;

  // Inclusive response time in ns (saturated: a hostile log's times can
  // be any int64, and their difference must not overflow).
  int64_t duration() const { return saturating_span(tin, tout); }
};

enum class TraceOrigin : uint8_t { kFlowEvents, kExecutionRecords };

struct Trace {
  int64_t trace_id = -1;
  int64_t thread_id = -1;  // -1 when unknown (OperationExecutionRecords carry none)
  std::string_view host;
  std::string_view session;
  int64_t parent_trace_id = -1;  // == trace_id for a root trace
  int32_t parent_order_id = -1;  // -1 for a root trace
  // The W3C trace it continued when sonde did not start that trace (a
  // foreign traceparent, or a part continuing such a trace): its id whole
  // and the caller's span id (docs/analysis/exports.md, "Ids").
  format::w3c::Context w3c;
  TraceOrigin origin = TraceOrigin::kFlowEvents;
  // Sorted by eoi; in a valid trace executions[i].eoi == i.
  std::vector<Execution> executions;

  // Earliest tin / latest tout over all executions (0 for an empty trace).
  int64_t start_time() const;
  int64_t end_time() const;
  int64_t duration() const { return saturating_span(start_time(), end_time()); }
};

// Why a trace could not be reconstructed. Kinds are stable (reports
// aggregate by kind); the detail text names the operation, index, etc.
enum class TraceProblemKind : uint8_t {
  kNoTraceMetadata,         // events without their TraceMetadata record
  kDuplicateTraceMetadata,  // two TraceMetadata records for one trace id
  kNoEntryEvent,            // no before or call event with order index 0
  kMissingAfterEvent,       // a before event whose after event never came
  kUnmatchedAfterEvent,     // an after event with no open before event
  kMismatchedAfterEvent,    // an after event for another operation than the open one
  kOrderIndexGap,           // order indices not 0..n-1: some index missing
  kDuplicateOrderIndex,     // two events with the same order index
  kNoExecutions,            // nothing in the trace produced an execution
  kEoiGap,                  // OperationExecutionRecords: eois not 0..n-1
  kDuplicateEoi,            // OperationExecutionRecords: two executions with one eoi
  kBadEntryEss,             // OperationExecutionRecords: the eoi-0 execution has ess != 0
  kEssJump,                 // OperationExecutionRecords: ess grows by more than 1
};

// Short stable name of a kind, e.g. "missing-after-event".
std::string_view to_string(TraceProblemKind kind);

struct TraceProblem {
  TraceProblemKind kind;
  std::string detail;  // human-readable, e.g. "missing after event for op X"
};

// Why an incomplete trace was closed (a complete one closes by itself).
enum class CloseCause : uint8_t {
  kEndOfInput,  // still open when the log ended
  kTimeout,     // no record for ReconstructionOptions::trace_timeout_ns
  kEvicted,     // more than ReconstructionOptions::max_open_traces open at once
  kComplete,    // closed as soon as it was complete (then invalid only if its content is)
};
std::string_view to_string(CloseCause cause);

struct InvalidTrace {
  int64_t trace_id = -1;
  CloseCause closed_by = CloseCause::kEndOfInput;
  std::vector<TraceProblem> problems;  // at least one; the first is the main reason
  uint64_t records = 0;                // records buffered for this trace
  // What could be reconstructed: metadata if seen, and the executions in eoi
  // order (tout == -1 where the exit was never seen). May be empty.
  Trace partial;
};

// Receives traces as soon as they are closed. Each trace is passed once and
// destroyed after the call; keep copies of what you need.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_trace(const Trace& trace) = 0;
  virtual void on_invalid_trace(const InvalidTrace& trace) = 0;
};

}  // namespace sonde::analysis
