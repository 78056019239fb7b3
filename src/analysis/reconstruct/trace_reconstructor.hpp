// Streaming trace reconstruction: a RecordSink that groups records by trace
// id and hands each trace to a TraceSink the moment it is complete, so memory
// holds only the traces still open. Flow events (TraceMetadata +
// Before/After events) and OperationExecutionRecords are reconstructed into
// the same Trace model (trace_model.hpp).
//
// Open traces are bounded: past `max_open_traces`, the least recently active
// trace is closed; with a timeout, a trace idle that long (in log time: the
// newest timestamp seen so far) is closed. Traces closed before they are
// complete, and complete ones whose content is inconsistent, are reported as
// InvalidTrace with reasons, never dropped silently.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/event_trace_buffer.hpp"
#include "analysis/reconstruct/execution_record_buffer.hpp"
#include "analysis/reconstruct/flow_event_pool.hpp"
#include "format/address_cache.hpp"
#include "format/record.hpp"
#include "format/serial_cache.hpp"
#include "format/string_pool.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::analysis {

struct ReconstructionOptions {
  // Synthesise missing after events (Kieker's --repair-event-based-traces):
  // an after event closes the executions left open above its own, and at the
  // end of input every still-open execution is closed. Lost events (gaps in
  // the order indices) cannot be repaired.
  bool repair_event_traces = false;
  // Close an OperationExecutionRecord trace as soon as its entry execution
  // (eoi 0, ess 0) and all eois below the highest one have arrived. The entry
  // is written last, when it returns, so this is safe for logs written in
  // order; set false to wait for the timeout or the end of input as Kieker does.
  bool close_execution_traces_on_entry = true;
  // Bound on traces open at once; 0 = unbounded.
  size_t max_open_traces = 1'000'000;
  // Close traces without a record for this long (ns of log time); 0 = never.
  int64_t trace_timeout_ns = 0;
  // Build a native log's well-formed traces straight from their typed
  // events (trace_reconstructor_direct.cpp); false: every trace through
  // the event buffer (the tests compare the two).
  bool direct_typed_traces = true;
};

struct ReconstructionStats {
  uint64_t records = 0;               // all records seen
  uint64_t flow_records = 0;          // TraceMetadata (and a TraceContext after it), trace events
  uint64_t execution_records = 0;     // OperationExecutionRecords
  uint64_t log_metadata_records = 0;  // KiekerMetadataRecords (describe the log, not a trace)
  uint64_t ignored_records = 0;       // records trace analysis does not use
  std::map<std::string, uint64_t> ignored_by_type;  // class name -> count
  uint64_t valid_traces = 0;
  uint64_t direct_traces = 0;  // of the valid ones, built on the direct path
  uint64_t invalid_traces = 0;
  uint64_t evicted_traces = 0;      // closed by max_open_traces
  uint64_t timed_out_traces = 0;    // closed by trace_timeout_ns
  uint64_t reopened_trace_ids = 0;  // records for a trace id closed shortly before
  size_t peak_open_traces = 0;
};

class TraceReconstructor : public format::RecordSink, private format::TypedFlowSink {
 public:
  // Trace strings are interned in `strings` (a new pool if null), which must
  // outlive every use of the traces and of what sinks keep from them.
  explicit TraceReconstructor(TraceSink& sink, ReconstructionOptions options = {},
                              std::shared_ptr<format::StringPool> strings = nullptr);

  bool on_record(const format::Record& record) override;
  // Native logs deliver their flow records through the typed fast path.
  format::TypedFlowSink* typed_flow() override { return this; }

  // Records seen per class name (including those taken in typed form).
  std::map<std::string, uint64_t> record_type_counts() const;

  // End of input: closes every open trace, in ascending trace-id order (as
  // Kieker does, for deterministic output). Call once, after the last record.
  void finish();

  const ReconstructionStats& stats() const { return stats_; }
  size_t open_traces() const { return open_.size() + direct_.size(); }
  const std::shared_ptr<format::StringPool>& strings() const { return strings_; }

 private:
  enum class RecordRole : uint8_t {
    kTraceMetadata,
    kFlowEvent,
    kExecutionRecord,
    kLogMetadata,
    kTraceContext,
    kIgnored,
  };
  struct Layout {
    // Checked on every lookup: a reader may free a schema and allocate
    // another at the same address (e.g. one reader per file).
    uint64_t schema_serial = 0;
    std::string class_name;
    uint64_t records = 0;  // records of this schema seen
    RecordRole role = RecordRole::kIgnored;
    FlowEventKind event_kind = FlowEventKind::kOther;
    bool constructor = false;  // a constructor's event
    // Field indices (-1 = absent), meaning depends on the role.
    int trace_id = -1, thread_id = -1, session = -1, host = -1, parent_trace_id = -1,
        parent_order_id = -1, timestamp = -1, order_index = -1, operation = -1, component = -1,
        cause = -1, tin = -1, tout = -1, eoi = -1, ess = -1, callee_operation = -1,
        callee_component = -1, w3c_high = -1, w3c_low = -1, parent_span_id = -1;
  };
  struct OpenKey {
    int64_t trace_id;
    bool execution_records;  // the two record families are separate traces, as in Kieker
    bool operator==(const OpenKey&) const = default;
  };
  struct OpenKeyHash {
    size_t operator()(const OpenKey& k) const noexcept {
      return std::hash<int64_t>()(k.trace_id) ^ (k.execution_records ? 0x9e3779b9u : 0u);
    }
  };
  struct OpenTrace {
    std::variant<EventTraceBuffer, ExecutionRecordBuffer> buffer;
    std::list<OpenKey>::iterator lru_position;
    int64_t last_active = 0;  // log time of its latest record
    bool reopened = false;    // its id had been closed shortly before
  };

  Layout& layout_of(const format::RecordSchema* schema);
  void add_trace_metadata(const TraceMetadataInfo& metadata, int64_t timestamp);
  void add_flow_event(int64_t trace_id, const FlowEvent& event);

  // format::TypedFlowSink
  void on_source_begin() override;
  void on_operation(uint32_t id, std::string_view signature, std::string_view component) override;
  bool on_trace_start(const format::TypedTraceStart& start) override;
  bool on_operation_event(const format::TypedOperationEvent& event) override;
  std::string_view intern(const format::Record& r, int field);
  // `text` interned, through intern_cache_: the typed path's session, host
  // and causes come back at the same addresses trace after trace.
  std::string_view intern_cached(std::string_view text);
  // The class part of an interned operation signature, parsed once per
  // distinct signature (it is a view into the interned string).
  std::string_view component_of(std::string_view interned_operation);
  OpenTrace& open_trace(const OpenKey& key);
  FlowEvent flow_event_of(const format::TypedOperationEvent& event);
  TraceMetadataInfo metadata_of(const format::TypedTraceStart& start);

  // The direct path (trace_reconstructor_direct.cpp): a typed trace that
  // starts with its metadata and whose events come in order, each after
  // closing the innermost open before, is kept as its events only and
  // built when its stack empties, without the open-trace table, the LRU
  // list and the event buffer. Anything else moves the trace to the
  // general path (replayed there event by event) before it is handled.
  struct DirectEvent {
    int64_t timestamp = 0;
    uint32_t operation = 0;
    format::TypedFlowKind kind = format::TypedFlowKind::kBefore;
    std::string_view cause;  // interned; kAfterFailed only
  };
  struct DirectTrace {
    TraceMetadataInfo metadata;
    int64_t start_timestamp = 0;
    int64_t last_active = 0;
    uint32_t depth = 0;
    std::vector<DirectEvent> events;  // order index = position
  };
  // Takes the trace start directly if it can; false: the general path.
  bool start_direct(const format::TypedTraceStart& start);
  // Takes the event directly if its trace is held here; false: not held
  // (the general path). An irregular event moves the trace there first.
  bool event_direct(const format::TypedOperationEvent& event);
  // Builds a held trace whose stack emptied; false (nothing emitted) if
  // an after event closed another operation than the innermost open one.
  bool build_direct(const DirectTrace& trace);
  // Index into direct_ of `trace_id`, or -1.
  int find_direct(int64_t trace_id);
  // Moves direct_[i] to the general path, as if it had come there.
  // `active_now`: a record of it is being handled (it goes to the front
  // of lru_); otherwise it keeps its last activity and its place by it.
  void replay_direct(size_t i, bool active_now);
  void replay_direct_trace(int64_t trace_id) {
    if (const int i = direct_.empty() ? -1 : find_direct(trace_id); i >= 0) {
      replay_direct(static_cast<size_t>(i), true);
    }
  }
  void replay_all_direct() {
    while (!direct_.empty()) replay_direct(direct_.size() - 1, false);
  }
  // Gives an open trace an earlier last activity and its place in lru_.
  void restore_activity(const OpenKey& key, int64_t last_active);
  // The operation's interned signature and component as the event buffer
  // gets them ("<unknown>" and "" for an undefined id).
  std::pair<std::string_view, std::string_view> operation_names(uint32_t id);
  // Times out held traces idle past the timeout (enforce_bounds).
  void time_out_direct();
  void close(OpenKey key, CloseCause cause);
  void advance_clock(int64_t timestamp);
  void enforce_bounds();
  void remember_closed(const OpenKey& key);

  TraceSink& sink_;
  ReconstructionOptions options_;
  std::shared_ptr<format::StringPool> strings_;
  ReconstructionStats stats_;
  std::unordered_map<const format::RecordSchema*, Layout> layouts_;
  // The layouts of the last few record types, by schema serial: Kieker's
  // flow records alternate between before, after and trace metadata.
  format::SerialCache<Layout*> recent_layouts_;
  std::map<std::string, uint64_t> retired_type_counts_;  // of layouts replaced
  // Typed fast path: the current source's operations (interned) by id, and
  // counts of the records taken in typed form.
  struct SourceOperation {
    std::string_view signature;
    std::string_view component;
    bool defined = false;
  };
  std::vector<SourceOperation> source_operations_;
  std::unordered_map<uint32_t, SourceOperation> sparse_source_operations_;
  std::array<uint64_t, 4> typed_counts_{};  // TraceMetadata, Before, After, AfterFailed
  OpenKey last_key_{-1, false};
  OpenTrace* last_open_ = nullptr;  // reset whenever a trace closes
  // Recently interned strings by the reader's address, so a repeated
  // operation name costs a compare instead of a hash and a table lookup.
  format::AddressCache<std::string_view, 256> intern_cache_;
  // Interned strings are unique per content, so their address is a key.
  std::unordered_map<const char*, std::string_view> components_;
  std::unordered_map<OpenKey, OpenTrace, OpenKeyHash> open_;
  using OpenNode = std::unordered_map<OpenKey, OpenTrace, OpenKeyHash>::node_type;
  // Memory reused from trace to trace instead of allocated and freed for
  // each (malloc and free were a tenth of the collector's time,
  // docs/PERFORMANCE.md): closed traces' event vectors (flow_event_pool.hpp),
  // and the result each trace is built into, unless it grew huge.
  static constexpr size_t kLargestKeptTraceBytes = size_t{64} << 20;  // built_'s executions
  FlowEventPool event_vectors_;
  TraceBuildResult built_;
  std::list<OpenKey> lru_;  // front = most recently active
  // Nodes of closed traces, reused by the next ones instead of freed and
  // allocated again (three allocations per trace: lru_, open_, closed_).
  std::list<OpenKey> spare_lru_;
  std::vector<OpenNode> spare_open_;
  // Newest timestamp seen (log time). Starts at 0 and only grows, so every
  // last_active lies in [0, now_] and now_ - last_active cannot overflow.
  int64_t now_ = 0;
  // No open trace can time out while now_ is at most this (enforce_bounds).
  int64_t idle_check_at_ = -1;
  // Recently closed trace ids (bounded FIFO), to flag late records.
  std::deque<OpenKey> closed_order_;
  std::unordered_set<OpenKey, OpenKeyHash> closed_;
  // The direct path's traces (at most kMostDirectTraces: one per thread
  // that is inside a trace, in a well-formed log), their ids in step.
  std::vector<DirectTrace> direct_;
  std::vector<int64_t> direct_ids_;
  std::vector<DirectTrace> spare_direct_;  // closed ones' event vectors
  int last_direct_ = -1;                   // index of the last one used
  std::vector<uint32_t> direct_stack_;     // build_direct's open executions
  // No held trace can time out while now_ is at most this.
  int64_t direct_check_at_ = -1;
};

}  // namespace sonde::analysis
