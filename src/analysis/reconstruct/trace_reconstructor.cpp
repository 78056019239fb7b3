#include "analysis/reconstruct/trace_reconstructor.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "analysis/model/operation_signature.hpp"
#include "format/schema.hpp"

namespace sonde::analysis {
namespace {

// How many closed trace ids to remember for flagging late records.
constexpr size_t kRememberedClosedTraces = 65536;
// Open traces' list and table nodes kept for reuse (close(), open_trace()):
// in a steady stream one trace closes for each that opens, so a few are
// enough; a burst of closes (timeouts, the end) keeps at most this many
// (a node of open_ holds an empty buffer, a few hundred bytes; one of
// lru_ 32 bytes; per client).
constexpr size_t kSpareNodes = 64;

constexpr std::string_view kFlowTracePackage = "kieker.common.record.flow.trace.";

int64_t get_i64(const format::Record& r, int field, int64_t fallback) {
  if (field < 0 || static_cast<size_t>(field) >= r.values.size()) return fallback;
  const int64_t* v = std::get_if<int64_t>(&r.values[field]);
  return v ? *v : fallback;
}

std::string_view simple_class_name(std::string_view class_name) {
  const size_t dot = class_name.rfind('.');
  return dot == std::string_view::npos ? class_name : class_name.substr(dot + 1);
}

}  // namespace

TraceReconstructor::TraceReconstructor(TraceSink& sink, ReconstructionOptions options,
                                       std::shared_ptr<format::StringPool> strings)
    : sink_(sink),
      options_(options),
      strings_(strings ? std::move(strings) : std::make_shared<format::StringPool>()) {}

TraceReconstructor::Layout& TraceReconstructor::layout_of(const format::RecordSchema* schema) {
  // A cached layout is a node of layouts_, which a schema at the same
  // address with another serial overwrites in place (below): hence the
  // check.
  if (Layout* const* hit = recent_layouts_.find(schema->serial);
      hit != nullptr && (*hit)->schema_serial == schema->serial) {
    return **hit;
  }
  auto it = layouts_.find(schema);
  if (it != layouts_.end() && it->second.schema_serial == schema->serial) {
    recent_layouts_.put(schema->serial, &it->second);
    return it->second;
  }
  if (it != layouts_.end()) retired_type_counts_[it->second.class_name] += it->second.records;
  Layout l;
  l.schema_serial = schema->serial;
  l.class_name = schema->class_name;
  auto f = [&](std::string_view name) { return schema->field_index(name); };
  const std::string_view cls = schema->class_name;
  const std::string_view simple = simple_class_name(cls);
  if (cls == format::kieker_class::kTraceMetadata ||
      (cls.starts_with(kFlowTracePackage) && simple == "ApplicationTraceMetadata")) {
    l.role = RecordRole::kTraceMetadata;
    l.trace_id = f("traceId");
    l.thread_id = f("threadId");
    l.session = f("sessionId");
    l.host = f("hostname");
    l.parent_trace_id = f("parentTraceId");
    l.parent_order_id = f("parentOrderId");
  } else if (cls == format::kieker_class::kMetadata) {
    l.role = RecordRole::kLogMetadata;
  } else if (cls == format::w3c::kTraceContextClass) {
    l.role = RecordRole::kTraceContext;
    l.trace_id = f("traceId");
    l.w3c_high = f("w3cTraceIdHigh");
    l.w3c_low = f("w3cTraceIdLow");
    l.parent_span_id = f("parentSpanId");
  } else if (cls == format::kieker_class::kOperationExecution) {
    l.role = RecordRole::kExecutionRecord;
    l.operation = f("operationSignature");
    l.session = f("sessionId");
    l.trace_id = f("traceId");
    l.tin = f("tin");
    l.tout = f("tout");
    l.host = f("hostname");
    l.eoi = f("eoi");
    l.ess = f("ess");
  } else if (cls.starts_with(kFlowTracePackage) && f("traceId") >= 0 && f("orderIndex") >= 0 &&
             f("timestamp") >= 0) {
    // Every trace event takes an order index; only operation before/after
    // and call events (and their constructor/object variants) make
    // executions.
    l.role = RecordRole::kFlowEvent;
    l.timestamp = f("timestamp");
    l.trace_id = f("traceId");
    l.order_index = f("orderIndex");
    l.operation = f("operationSignature");
    l.component = f("classSignature");
    l.cause = f("cause");
    l.callee_operation = f("calleeOperationSignature");
    l.callee_component = f("calleeClassSignature");
    l.constructor = simple.find("Constructor") != std::string_view::npos;
    const bool has_operation = l.operation >= 0 && l.component >= 0;
    if (has_operation && simple.starts_with("Before")) {
      l.event_kind = FlowEventKind::kBefore;
    } else if (has_operation && simple.starts_with("After")) {
      l.event_kind = simple.find("Failed") != std::string_view::npos ? FlowEventKind::kAfterFailed
                                                                     : FlowEventKind::kAfter;
    } else if (has_operation && simple.starts_with("Call") && l.callee_operation >= 0 &&
               l.callee_component >= 0) {
      l.event_kind = FlowEventKind::kCall;
    } else {
      l.event_kind = FlowEventKind::kOther;
    }
  }
  Layout& stored = layouts_.insert_or_assign(schema, std::move(l)).first->second;
  recent_layouts_.put(schema->serial, &stored);
  return stored;
}

std::string_view TraceReconstructor::intern(const format::Record& r, int field) {
  if (field < 0 || static_cast<size_t>(field) >= r.values.size()) return {};
  const std::string_view* v = std::get_if<std::string_view>(&r.values[field]);
  if (v == nullptr) return {};
  return intern_cached(*v);
}

std::string_view TraceReconstructor::intern_cached(std::string_view text) {
  if (text.empty()) return strings_->intern(text);
  if (const std::string_view* hit = intern_cache_.find(text)) return *hit;
  const std::string_view interned = strings_->intern(text);
  intern_cache_.put(text, interned, interned);
  return interned;
}

std::string_view TraceReconstructor::component_of(std::string_view interned_operation) {
  auto [it, inserted] = components_.try_emplace(interned_operation.data());
  if (inserted) it->second = class_of_signature(interned_operation, interned_operation);
  return it->second;
}

bool TraceReconstructor::on_record(const format::Record& r) {
  ++stats_.records;
  if (r.schema == nullptr) return true;
  Layout& l = layout_of(r.schema);
  ++l.records;
  switch (l.role) {
    case RecordRole::kLogMetadata:
      ++stats_.log_metadata_records;
      return true;

    case RecordRole::kIgnored:
      ++stats_.ignored_records;
      ++stats_.ignored_by_type[r.schema->class_name];
      return true;

    case RecordRole::kTraceMetadata: {
      ++stats_.flow_records;
      TraceMetadataInfo m;
      m.trace_id = get_i64(r, l.trace_id, -1);
      m.thread_id = get_i64(r, l.thread_id, -1);
      m.session = intern(r, l.session);
      m.host = intern(r, l.host);
      m.parent_trace_id = get_i64(r, l.parent_trace_id, m.trace_id);
      m.parent_order_id = static_cast<int32_t>(get_i64(r, l.parent_order_id, -1));
      replay_direct_trace(m.trace_id);
      add_trace_metadata(m, r.logging_timestamp);
      break;
    }

    case RecordRole::kTraceContext: {
      // Right after its trace's metadata; for a trace no longer open
      // (a reordered log), kept by no one and counted as ignored.
      ++stats_.flow_records;
      replay_direct_trace(get_i64(r, l.trace_id, -1));
      const auto it = open_.find(OpenKey{get_i64(r, l.trace_id, -1), false});
      if (it == open_.end()) {
        ++stats_.ignored_records;
        ++stats_.ignored_by_type[r.schema->class_name];
        return true;
      }
      format::w3c::Context w3c;
      w3c.trace_id_high = static_cast<uint64_t>(get_i64(r, l.w3c_high, 0));
      w3c.trace_id_low = static_cast<uint64_t>(get_i64(r, l.w3c_low, 0));
      w3c.parent_span_id = static_cast<uint64_t>(get_i64(r, l.parent_span_id, 0));
      std::get<EventTraceBuffer>(it->second.buffer).set_w3c(w3c);
      break;
    }

    case RecordRole::kFlowEvent: {
      ++stats_.flow_records;
      FlowEvent e;
      e.timestamp = get_i64(r, l.timestamp, 0);
      e.order_index = static_cast<int32_t>(get_i64(r, l.order_index, -1));
      e.kind = l.event_kind;
      e.constructor = l.constructor;
      if (e.kind != FlowEventKind::kOther) {
        e.operation = intern(r, l.operation);
        e.component = intern(r, l.component);
        if (e.kind == FlowEventKind::kAfterFailed) e.cause = intern(r, l.cause);
        if (e.kind == FlowEventKind::kCall) {
          e.callee_operation = intern(r, l.callee_operation);
          e.callee_component = intern(r, l.callee_component);
        }
      }
      replay_direct_trace(get_i64(r, l.trace_id, -1));
      add_flow_event(get_i64(r, l.trace_id, -1), e);
      break;
    }

    case RecordRole::kExecutionRecord: {
      ++stats_.execution_records;
      Execution x;
      x.operation = intern(r, l.operation);
      // OperationExecutionRecords carry no class signature: take the class
      // from the operation signature, as Kieker does.
      x.component = component_of(x.operation);
      x.host = intern(r, l.host);
      x.tin = get_i64(r, l.tin, 0);
      x.tout = get_i64(r, l.tout, 0);
      x.eoi = static_cast<int32_t>(get_i64(r, l.eoi, -1));
      x.ess = static_cast<int32_t>(get_i64(r, l.ess, -1));
      advance_clock(x.tout);
      const OpenKey key{get_i64(r, l.trace_id, -1), true};
      auto& buffer = std::get<ExecutionRecordBuffer>(open_trace(key).buffer);
      buffer.add(x, intern(r, l.session));
      if (options_.close_execution_traces_on_entry && buffer.complete_on_entry()) {
        close(key, CloseCause::kComplete);
      }
      break;
    }
  }
  enforce_bounds();
  return true;
}

void TraceReconstructor::add_trace_metadata(const TraceMetadataInfo& metadata, int64_t timestamp) {
  if (timestamp > 0) advance_clock(timestamp);
  const OpenKey key{metadata.trace_id, false};
  auto& buffer = std::get<EventTraceBuffer>(open_trace(key).buffer);
  buffer.set_metadata(metadata);
  // Metadata normally comes first, but may arrive after the events.
  if (buffer.is_complete()) close(key, CloseCause::kComplete);
}

void TraceReconstructor::add_flow_event(int64_t trace_id, const FlowEvent& event) {
  advance_clock(event.timestamp);
  const OpenKey key{trace_id, false};
  auto& buffer = std::get<EventTraceBuffer>(open_trace(key).buffer);
  buffer.add_event(event, &event_vectors_);
  if (buffer.is_complete()) close(key, CloseCause::kComplete);
}

void TraceReconstructor::on_source_begin() {
  replay_all_direct();  // their operation ids are the ending source's
  source_operations_.clear();
  sparse_source_operations_.clear();
}

void TraceReconstructor::on_operation(uint32_t id, std::string_view signature,
                                      std::string_view component) {
  // Ids come from the file: a corrupt huge one must not size the vector.
  constexpr uint32_t kMaxDenseId = 1u << 20;
  SourceOperation op{strings_->intern(signature), strings_->intern(component), true};
  // Held traces name their operations when built: one redefined since
  // their events came is replayed first, as the general path named it.
  if (!direct_.empty()) {
    const SourceOperation* before =
        id < source_operations_.size() ? &source_operations_[id] : nullptr;
    if (before == nullptr) {
      auto it = sparse_source_operations_.find(id);
      if (it != sparse_source_operations_.end()) before = &it->second;
    }
    if (before != nullptr && before->defined &&
        (before->signature.data() != op.signature.data() ||
         before->component.data() != op.component.data())) {
      replay_all_direct();
    }
  }
  if (id >= kMaxDenseId) {
    sparse_source_operations_[id] = op;
    return;
  }
  if (id >= source_operations_.size()) source_operations_.resize(id + 1);
  source_operations_[id] = op;
}

bool TraceReconstructor::on_trace_start(const format::TypedTraceStart& start) {
  ++stats_.records;
  ++stats_.flow_records;
  ++typed_counts_[0];
  if (!options_.direct_typed_traces || !start_direct(start)) {
    add_trace_metadata(metadata_of(start), start.timestamp);
  }
  enforce_bounds();
  return true;
}

// on_operation_event counts typed events in typed_counts_ by their kind,
// whose slots follow FlowEventKind's order (record_type_counts()).
static_assert(static_cast<int>(format::TypedFlowKind::kBefore) ==
                  static_cast<int>(FlowEventKind::kBefore) &&
              static_cast<int>(format::TypedFlowKind::kAfter) ==
                  static_cast<int>(FlowEventKind::kAfter) &&
              static_cast<int>(format::TypedFlowKind::kAfterFailed) ==
                  static_cast<int>(FlowEventKind::kAfterFailed));

bool TraceReconstructor::on_operation_event(const format::TypedOperationEvent& event) {
  ++stats_.records;
  ++stats_.flow_records;
  ++typed_counts_[1 + static_cast<size_t>(event.kind)];
  if (direct_.empty() || !event_direct(event)) {
    add_flow_event(event.trace_id, flow_event_of(event));
  }
  enforce_bounds();
  return true;
}

std::map<std::string, uint64_t> TraceReconstructor::record_type_counts() const {
  std::map<std::string, uint64_t> counts = retired_type_counts_;
  for (const auto& [schema, layout] : layouts_) {
    if (layout.records != 0) counts[layout.class_name] += layout.records;
  }
  const std::string_view typed_names[] = {
      format::kieker_class::kTraceMetadata, format::kieker_class::kBeforeOperation,
      format::kieker_class::kAfterOperation, format::kieker_class::kAfterOperationFailed};
  for (size_t i = 0; i < typed_counts_.size(); ++i) {
    if (typed_counts_[i] != 0) counts[std::string(typed_names[i])] += typed_counts_[i];
  }
  return counts;
}

TraceReconstructor::OpenTrace& TraceReconstructor::open_trace(const OpenKey& key) {
  if (last_open_ != nullptr && key == last_key_) {
    last_open_->last_active = now_;  // already at the front of lru_
    return *last_open_;
  }
  auto it = open_.find(key);
  if (it != open_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru_position);
    it->second.last_active = now_;
    last_key_ = key;
    last_open_ = &it->second;
    return it->second;
  }
  if (spare_lru_.empty()) {
    lru_.push_front(key);
  } else {
    lru_.splice(lru_.begin(), spare_lru_, spare_lru_.begin());
    lru_.front() = key;
  }
  std::vector<FlowEvent> storage;
  if (!key.execution_records) storage = event_vectors_.take_small();
  OpenTrace t{key.execution_records
                  ? decltype(OpenTrace::buffer)(ExecutionRecordBuffer(key.trace_id))
                  : decltype(OpenTrace::buffer)(EventTraceBuffer(
                        key.trace_id, options_.repair_event_traces, std::move(storage))),
              lru_.begin(), now_, closed_.count(key) > 0};
  if (t.reopened) ++stats_.reopened_trace_ids;
  OpenTrace* at = nullptr;
  if (spare_open_.empty()) {
    at = &open_.emplace(key, std::move(t)).first->second;
  } else {
    OpenNode node = std::move(spare_open_.back());
    spare_open_.pop_back();
    node.key() = key;
    node.mapped() = std::move(t);
    at = &open_.insert(std::move(node)).position->second;
  }
  OpenTrace& inserted = *at;
  stats_.peak_open_traces = std::max(stats_.peak_open_traces, open_.size() + direct_.size());
  last_key_ = key;
  last_open_ = &inserted;
  return inserted;
}

void TraceReconstructor::advance_clock(int64_t timestamp) { now_ = std::max(now_, timestamp); }

void TraceReconstructor::enforce_bounds() {
  while (options_.max_open_traces > 0 && open_.size() + direct_.size() > options_.max_open_traces) {
    if (!direct_.empty()) {
      replay_all_direct();  // the general path chooses which to evict
      continue;
    }
    ++stats_.evicted_traces;
    close(lru_.back(), CloseCause::kEvicted);
  }
  time_out_direct();
  if (options_.trace_timeout_ns <= 0 || now_ <= idle_check_at_) return;
  // lru_ is ordered by last activity and the clock only moves forward, so
  // the idle traces are all at the back.
  while (!lru_.empty()) {
    const OpenTrace& oldest = open_.at(lru_.back());
    if (now_ - oldest.last_active <= options_.trace_timeout_ns) break;
    ++stats_.timed_out_traces;
    close(lru_.back(), CloseCause::kTimeout);
  }
  // The oldest activity only grows (the back of lru_ closes, or moves to
  // the front, and new traces start at now_), so nothing can time out
  // before the back's deadline: until then this is one comparison per
  // record instead of a hash lookup.
  const int64_t oldest = lru_.empty() ? now_ : open_.at(lru_.back()).last_active;
  idle_check_at_ = oldest > std::numeric_limits<int64_t>::max() - options_.trace_timeout_ns
                       ? std::numeric_limits<int64_t>::max()
                       : oldest + options_.trace_timeout_ns;
}

void TraceReconstructor::remember_closed(const OpenKey& key) {
  if (closed_order_.size() < kRememberedClosedTraces) {
    if (closed_.insert(key).second) closed_order_.push_back(key);
    return;
  }
  // Full: the oldest id's node takes the new one, so a trace's close
  // allocates and frees nothing here.
  const OpenKey oldest = closed_order_.front();
  if (oldest == key) return;  // remembered already, and stays the oldest
  auto node = closed_.extract(oldest);
  node.value() = key;
  auto put = closed_.insert(std::move(node));
  if (!put.inserted) {  // remembered already: the oldest stays
    put.node.value() = oldest;
    closed_.insert(std::move(put.node));
    return;
  }
  closed_order_.pop_front();
  closed_order_.push_back(key);
}

// `key` by value: callers pass lru_.back(), which this function erases.
void TraceReconstructor::close(OpenKey key, CloseCause cause) {
  auto node = open_.extract(key);
  if (node.empty()) return;
  last_open_ = nullptr;
  OpenTrace& open = node.mapped();
  if (spare_lru_.size() < kSpareNodes) {
    spare_lru_.splice(spare_lru_.begin(), lru_, open.lru_position);
  } else {
    lru_.erase(open.lru_position);
  }
  remember_closed(key);
  const bool reopened = open.reopened;

  TraceBuildResult& result = built_;
  uint64_t records = 0;
  if (auto* events = std::get_if<EventTraceBuffer>(&open.buffer)) {
    // Like Kieker, repair closes still-open executions only at the end of input.
    events->build(events->repair_enabled() && cause == CloseCause::kEndOfInput, result);
    records = events->records();
    event_vectors_.give(events->take_storage());
  } else {
    const auto& executions = std::get<ExecutionRecordBuffer>(open.buffer);
    result = executions.build();
    records = executions.records();
  }
  // Nothing below depends on the buffer any more; free it before the sink
  // runs, and keep the node for a trace to come (open_trace).
  // (An ExecutionRecordBuffer: made empty, it allocates nothing; an
  // EventTraceBuffer reserves room for its events.)
  open.buffer.emplace<ExecutionRecordBuffer>(0);
  if (spare_open_.size() < kSpareNodes) spare_open_.push_back(std::move(node));
  node = {};

  if (result.valid()) {
    ++stats_.valid_traces;
    sink_.on_trace(result.trace);
    // A huge trace's vector is not kept for the client's life.
    if (result.trace.executions.capacity() * sizeof(Execution) > kLargestKeptTraceBytes)
      result.trace.executions = {};
    return;
  }
  ++stats_.invalid_traces;
  InvalidTrace invalid;
  invalid.trace_id = key.trace_id;
  invalid.closed_by = cause;
  invalid.records = records;
  invalid.problems = std::move(result.problems);
  if (reopened) {
    invalid.problems.front().detail += " (this trace id was closed shortly before: late records?)";
  }
  invalid.partial = std::move(result.trace);
  sink_.on_invalid_trace(invalid);
}

void TraceReconstructor::finish() {
  replay_all_direct();
  std::vector<OpenKey> keys;
  keys.reserve(open_.size());
  for (const auto& [key, trace] : open_) keys.push_back(key);
  std::sort(keys.begin(), keys.end(), [](const OpenKey& a, const OpenKey& b) {
    return a.trace_id != b.trace_id ? a.trace_id < b.trace_id
                                    : a.execution_records < b.execution_records;
  });
  for (const OpenKey& key : keys) close(key, CloseCause::kEndOfInput);
}

}  // namespace sonde::analysis
