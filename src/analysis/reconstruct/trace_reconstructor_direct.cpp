// The reconstructor's direct path for typed traces (a native log's or a
// native stream's; trace_reconstructor.hpp). Nearly every trace a monitor
// writes is well formed: its metadata first, then before and after events
// in order, each after closing the innermost open before, until the stack
// empties. Such a trace is kept here as its events only, and built into
// executions when it completes, in one pass; the general path's open-trace
// table, LRU list, event buffer and builder cost about a third of the
// collector's analysis (docs/PERFORMANCE.md).
//
// Exactly the general path's traces: a trace is held only while every
// event it received is one the general path would accept without a
// problem, and the first that is not (an order index out of place, an
// after with nothing open, an operation not defined yet, a second start,
// a record of another family for the same id, too many events) moves it
// there, replayed event by event, before that event is handled. Held
// traces count as open (open_traces(), peak_open_traces, the bound); one
// that times out, or is moved for a reason of another trace's (the bound,
// a redefined operation, a new source), joins the general path at its
// place by last activity, so timeouts and evictions pick and order the
// traces as before.
#include <algorithm>
#include <limits>
#include <tuple>

#include "analysis/reconstruct/flow_names.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"

namespace sonde::analysis {
namespace {

// Traces held at once, at most (one per thread inside a trace, in a log
// written by the monitor); the rest take the general path.
constexpr size_t kMostDirectTraces = 64;
// Events of one held trace, at most: a longer trace continues on the
// general path, whose memory use for huge traces is bounded there.
constexpr size_t kMostDirectEvents = size_t{1} << 16;
// Closed held traces whose event vectors are kept for the next ones.
constexpr size_t kSpareDirectTraces = 64;
constexpr size_t kLargestKeptDirectEvents = 4096;

}  // namespace

// The typed records as the general path takes them.
TraceMetadataInfo TraceReconstructor::metadata_of(const format::TypedTraceStart& start) {
  TraceMetadataInfo m;
  m.trace_id = start.trace_id;
  m.thread_id = start.thread_id;
  m.session = intern_cached(start.session);
  m.host = intern_cached(start.host);
  m.parent_trace_id = start.parent_trace_id;
  m.parent_order_id = start.parent_order_id;
  m.w3c = start.w3c;
  return m;
}

FlowEvent TraceReconstructor::flow_event_of(const format::TypedOperationEvent& event) {
  FlowEvent e;
  e.timestamp = event.timestamp;
  e.order_index = static_cast<int32_t>(event.order_index);
  switch (event.kind) {
    case format::TypedFlowKind::kBefore:
      e.kind = FlowEventKind::kBefore;
      break;
    case format::TypedFlowKind::kAfter:
      e.kind = FlowEventKind::kAfter;
      break;
    case format::TypedFlowKind::kAfterFailed:
      e.kind = FlowEventKind::kAfterFailed;
      e.cause = intern_cached(event.cause);
      break;
  }
  std::tie(e.operation, e.component) = operation_names(event.operation);
  return e;
}

std::pair<std::string_view, std::string_view> TraceReconstructor::operation_names(uint32_t id) {
  const SourceOperation* op = nullptr;
  if (id < source_operations_.size()) {
    op = &source_operations_[id];
  } else if (auto it = sparse_source_operations_.find(id); it != sparse_source_operations_.end()) {
    op = &it->second;
  }
  if (op != nullptr && op->defined) return {op->signature, op->component};
  return {strings_->intern("<unknown>"), {}};
}

int TraceReconstructor::find_direct(int64_t trace_id) {
  for (size_t i = 0; i < direct_ids_.size(); ++i) {
    if (direct_ids_[i] == trace_id) return static_cast<int>(i);
  }
  return -1;
}

bool TraceReconstructor::start_direct(const format::TypedTraceStart& start) {
  if (options_.repair_event_traces) return false;
  // A second start for a held trace: the general path judges both.
  if (!direct_.empty() && find_direct(start.trace_id) >= 0) {
    replay_direct_trace(start.trace_id);
    return false;
  }
  if (direct_.size() >= kMostDirectTraces) return false;
  const OpenKey key{start.trace_id, false};
  if (!open_.empty() && open_.count(key) > 0) return false;  // events came before it
  if (closed_.count(key) > 0) return false;                  // a reused id: flagged there
  DirectTrace t;
  if (!spare_direct_.empty()) {
    t = std::move(spare_direct_.back());
    spare_direct_.pop_back();
  }
  t.metadata = metadata_of(start);
  t.start_timestamp = start.timestamp;
  t.depth = 0;
  t.events.clear();
  if (start.timestamp > 0) advance_clock(start.timestamp);
  t.last_active = now_;
  direct_.push_back(std::move(t));
  direct_ids_.push_back(start.trace_id);
  last_direct_ = static_cast<int>(direct_.size()) - 1;
  stats_.peak_open_traces = std::max(stats_.peak_open_traces, open_.size() + direct_.size());
  if (options_.trace_timeout_ns > 0) {
    const int64_t due = now_ > std::numeric_limits<int64_t>::max() - options_.trace_timeout_ns
                            ? std::numeric_limits<int64_t>::max()
                            : now_ + options_.trace_timeout_ns;
    if (direct_check_at_ < 0 || due < direct_check_at_) direct_check_at_ = due;
  }
  return true;
}

bool TraceReconstructor::event_direct(const format::TypedOperationEvent& event) {
  int i = last_direct_;
  if (i < 0 || static_cast<size_t>(i) >= direct_ids_.size() || direct_ids_[i] != event.trace_id) {
    i = find_direct(event.trace_id);
    if (i < 0) return false;
    last_direct_ = i;
  }
  DirectTrace& t = direct_[static_cast<size_t>(i)];
  const bool before = event.kind == format::TypedFlowKind::kBefore;
  const bool defined = event.operation < source_operations_.size()
                           ? source_operations_[event.operation].defined
                           : sparse_source_operations_.count(event.operation) > 0;
  const bool regular = event.order_index == static_cast<int64_t>(t.events.size()) &&
                       (before ? true : t.depth > 0) && defined &&
                       t.events.size() < kMostDirectEvents;
  if (!regular) {
    replay_direct(static_cast<size_t>(i), true);
    return false;  // this event on the general path, after its trace
  }
  advance_clock(event.timestamp);
  t.last_active = now_;
  t.events.push_back({event.timestamp, event.operation, event.kind,
                      event.kind == format::TypedFlowKind::kAfterFailed ? intern_cached(event.cause)
                                                                        : std::string_view()});
  if (before) {
    ++t.depth;
    return true;
  }
  if (--t.depth > 0) return true;
  // The stack emptied: complete, where the event buffer finds it so too.
  if (!build_direct(t)) {
    replay_direct(static_cast<size_t>(i),
                  true);  // its last event closes it there, with the problem
    return true;
  }
  const OpenKey key{event.trace_id, false};
  remember_closed(key);
  ++stats_.valid_traces;
  ++stats_.direct_traces;
  sink_.on_trace(built_.trace);
  if (built_.trace.executions.capacity() * sizeof(Execution) > kLargestKeptTraceBytes) {
    built_.trace.executions = {};
  }
  // Swap-remove, keeping the event vector for the next trace.
  DirectTrace done = std::move(direct_[static_cast<size_t>(i)]);
  direct_[static_cast<size_t>(i)] = std::move(direct_.back());
  direct_.pop_back();
  direct_ids_[static_cast<size_t>(i)] = direct_ids_.back();
  direct_ids_.pop_back();
  last_direct_ = -1;
  if (spare_direct_.size() < kSpareDirectTraces &&
      done.events.capacity() <= kLargestKeptDirectEvents) {
    spare_direct_.push_back(std::move(done));
  }
  return true;
}

bool TraceReconstructor::build_direct(const DirectTrace& t) {
  start_flow_trace(t.metadata, built_);
  Trace& trace = built_.trace;
  trace.executions.reserve(t.events.size() / 2 + 1);
  direct_stack_.clear();
  for (size_t k = 0; k < t.events.size(); ++k) {
    const DirectEvent& e = t.events[k];
    const auto [operation, component] = operation_names(e.operation);
    if (e.kind == format::TypedFlowKind::kBefore) {
      Execution x;
      x.operation = operation;
      x.component = component_or_class(component, operation);
      x.host = trace.host;
      x.tin = e.timestamp;
      x.tout = -1;
      x.order_index = static_cast<int32_t>(k);
      x.eoi = static_cast<int32_t>(trace.executions.size());
      x.ess = static_cast<int32_t>(direct_stack_.size());
      // Kieker: a before without its call is a certain call only as the root.
      x.assumed = x.ess > 0;
      direct_stack_.push_back(static_cast<uint32_t>(trace.executions.size()));
      trace.executions.push_back(x);
      continue;
    }
    Execution& x = trace.executions[direct_stack_.back()];
    if (!same_text(x.operation, operation) ||
        !same_text(x.component, component_or_class(component, operation))) {
      return false;
    }
    x.tout = e.timestamp;
    x.exit_order_index = static_cast<int32_t>(k);
    x.failed = e.kind == format::TypedFlowKind::kAfterFailed;
    x.cause = e.cause;
    direct_stack_.pop_back();
  }
  return true;
}

void TraceReconstructor::replay_direct(size_t i, bool active_now) {
  DirectTrace t = std::move(direct_[i]);
  const int64_t trace_id = direct_ids_[i];
  direct_[i] = std::move(direct_.back());
  direct_.pop_back();
  direct_ids_[i] = direct_ids_.back();
  direct_ids_.pop_back();
  last_direct_ = -1;
  add_trace_metadata(t.metadata, t.start_timestamp);
  for (size_t k = 0; k < t.events.size(); ++k) {
    const DirectEvent& d = t.events[k];
    add_flow_event(trace_id, flow_event_of({d.kind, d.timestamp, trace_id, static_cast<int64_t>(k),
                                            d.operation, d.cause}));
  }
  if (!active_now) restore_activity(OpenKey{trace_id, false}, t.last_active);
  t.events.clear();
  if (spare_direct_.size() < kSpareDirectTraces &&
      t.events.capacity() <= kLargestKeptDirectEvents) {
    spare_direct_.push_back(std::move(t));
  }
}

void TraceReconstructor::restore_activity(const OpenKey& key, int64_t last_active) {
  auto it = open_.find(key);
  if (it == open_.end()) return;
  OpenTrace& open = it->second;
  open.last_active = last_active;
  // lru_ runs from the most to the least recently active: the trace goes
  // right after the last one active at least as recently. From the back,
  // since a trace replayed this way was usually idle for a while.
  lru_.splice(lru_.end(), lru_, open.lru_position);
  auto at = open.lru_position;
  auto before = at;
  while (before != lru_.begin()) {
    auto previous = std::prev(before);
    if (open_.at(*previous).last_active >= last_active) break;
    before = previous;
  }
  if (before != at) lru_.splice(before, lru_, at);
  last_open_ = nullptr;  // open_trace's shortcut assumes the front
  idle_check_at_ = -1;   // it may be the next to time out
}

void TraceReconstructor::time_out_direct() {
  if (options_.trace_timeout_ns <= 0 || direct_.empty() || now_ <= direct_check_at_) return;
  int64_t oldest = std::numeric_limits<int64_t>::max();
  // Downwards: a swap-remove brings in an element already looked at. The
  // general path then closes them with its own, oldest first.
  for (size_t i = direct_.size(); i-- > 0;) {
    if (now_ - direct_[i].last_active > options_.trace_timeout_ns) {
      replay_direct(i, false);
    } else {
      oldest = std::min(oldest, direct_[i].last_active);
    }
  }
  direct_check_at_ =
      direct_.empty() || oldest > std::numeric_limits<int64_t>::max() - options_.trace_timeout_ns
          ? -1
          : oldest + options_.trace_timeout_ns;
}

}  // namespace sonde::analysis
