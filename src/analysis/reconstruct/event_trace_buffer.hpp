// Buffers the flow events of one trace id until the trace is complete, then
// turns them into executions (flow_trace_builder.hpp). Completion follows
// Kieker's EventRecordTraceReconstructionStage: TraceMetadata present, a
// before event with order index 0 seen, open before/after events balanced
// to 0, and order indices exactly 0..n-1. A trace that begins with a call
// event (its caller not instrumented) is never complete early, as in
// Kieker: it closes at the end of input or when it times out. Each check is
// O(1) per event; the order-index sort and the call-stack walk run once,
// when the trace is closed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/trace_build_result.hpp"

namespace sonde::analysis {

class FlowEventPool;

enum class FlowEventKind : uint8_t {
  kBefore,       // BeforeOperationEvent and its constructor/object variants
  kAfter,        // AfterOperationEvent and variants
  kAfterFailed,  // AfterOperationFailedEvent and variants
  kCall,         // CallOperationEvent, CallConstructorEvent and their object variants
  kOther,        // other trace events (SplitEvent, ...): use an order index only
};

struct FlowEvent {
  int64_t timestamp = 0;
  int32_t order_index = 0;
  FlowEventKind kind = FlowEventKind::kOther;
  bool constructor = false;           // a Before/After/CallConstructorEvent (or object variant)
  std::string_view operation;         // kCall: the caller's
  std::string_view component;         // class signature; kCall: the caller's
  std::string_view callee_operation;  // kCall only
  std::string_view callee_component;  // kCall only
  std::string_view cause;             // kAfterFailed only
};

struct TraceMetadataInfo {
  int64_t trace_id = -1;
  int64_t thread_id = -1;
  std::string_view session;
  std::string_view host;
  int64_t parent_trace_id = -1;
  int32_t parent_order_id = -1;
  format::w3c::Context w3c;
};

// Empties `result` for the flow-event trace `metadata` describes, keeping
// its executions' room, and fills the trace's fields from the metadata
// (the event buffer's build and the reconstructor's direct path).
void start_flow_trace(const TraceMetadataInfo& metadata, TraceBuildResult& result);

class EventTraceBuffer {
 public:
  // `repair`: synthesise missing after events (Kieker's
  // --repair-event-based-traces). An after event that closes an operation
  // deeper in the stack closes the ones above it at its own timestamp; see
  // build() for the end of input.
  // `storage`: a vector to keep the events in, as take_storage() gave it
  // back from a closed trace (its memory is reused, its contents dropped).
  EventTraceBuffer(int64_t trace_id, bool repair, std::vector<FlowEvent> storage = {});

  void set_metadata(const TraceMetadataInfo& metadata);
  // The TraceContext record after the metadata.
  void set_w3c(const format::w3c::Context& w3c) { metadata_.w3c = w3c; }
  // `pool`: where a full vector finds a larger one (flow_event_pool.hpp).
  void add_event(const FlowEvent& event, FlowEventPool* pool = nullptr);

  // Kieker's completion rule (see the file comment). A complete trace may
  // still turn out invalid in build() (duplicate indices, mismatched afters).
  bool is_complete() const;

  // Reconstructs executions in order-index order (FlowTraceBuilder: each
  // before event, or the call event before it, opens an execution; its
  // after event closes it). `close_open_executions` (repair at end of
  // input) closes what is still open at the latest timestamp of the trace
  // instead of reporting missing after events. Kieker uses the before
  // event's own timestamp there, which gives the caller a shorter time than
  // its callees; the latest timestamp keeps every callee inside its caller.
  // Into `out`, whose vectors' memory is reused (everything in it is
  // replaced).
  void build(bool close_open_executions, TraceBuildResult& out) const;
  // The events' vector, emptied, for the next trace's buffer; this buffer
  // is left empty.
  std::vector<FlowEvent> take_storage();

  int64_t trace_id() const { return trace_id_; }
  int64_t last_timestamp() const { return last_timestamp_; }
  uint64_t records() const { return events_.size() + metadata_records_; }
  bool repair_enabled() const { return repair_; }

 private:
  struct OpenOperation {
    std::string_view operation;
    std::string_view component;
  };

  int64_t trace_id_;
  bool repair_;
  TraceMetadataInfo metadata_;
  uint32_t metadata_records_ = 0;
  bool saw_entry_ = false;                 // a before event with order index 0
  bool saw_call_entry_ = false;            // a call event with order index 0
  int64_t open_ = 0;                       // befores minus afters (without repair)
  std::vector<OpenOperation> open_stack_;  // arrival-order call stack (with repair)
  int64_t max_order_index_ = -1;
  int64_t last_timestamp_ = INT64_MIN;
  std::vector<FlowEvent> events_;
  bool arrived_in_order_ = true;  // order indices never decreased
};

}  // namespace sonde::analysis
