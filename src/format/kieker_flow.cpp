#include "format/kieker_flow.hpp"

namespace sonde::format {

KiekerFlowBuilder::KiekerFlowBuilder(RecordSink& sink, StringPool& pool, NameForm form)
    : sink_(sink),
      typed_(sink.typed_flow()),
      pool_(pool),
      form_(form),
      metadata_(find_builtin_schema(kieker_class::kMetadata)),
      trace_(find_builtin_schema(kieker_class::kTraceMetadata)),
      trace_context_(find_builtin_schema(w3c::kTraceContextClass)),
      before_(find_builtin_schema(kieker_class::kBeforeOperation)),
      after_(find_builtin_schema(kieker_class::kAfterOperation)),
      failed_(find_builtin_schema(kieker_class::kAfterOperationFailed)) {
  if (typed_ != nullptr) typed_->on_source_begin();
}

void KiekerFlowBuilder::define_operation(uint32_t op, std::string_view name,
                                         std::string_view module, native::OperationKind kind) {
  const OperationName sig = operation_name(name, module, form_, kind);
  if (typed_ != nullptr) typed_->on_operation(op, sig.operation, sig.component);
  if (op >= kMaxDenseOperationId) {
    sparse_ops_[op] = {pool_.intern(sig.operation), pool_.intern(sig.component)};
    return;
  }
  if (op >= ops_.size()) {
    ops_.resize(op + 1);
    op_defined_.resize(op + 1, false);
  }
  ops_[op] = {pool_.intern(sig.operation), pool_.intern(sig.component)};
  op_defined_[op] = true;
}

const KiekerFlowBuilder::Operation* KiekerFlowBuilder::find_operation(uint32_t op) const {
  if (op < ops_.size()) return op_defined_[op] ? &ops_[op] : nullptr;
  auto it = sparse_ops_.find(op);
  return it != sparse_ops_.end() ? &it->second : nullptr;
}

KiekerFlowBuilder::Thread& KiekerFlowBuilder::thread_state(uint32_t thread) {
  if (last_thread_ == nullptr || thread != last_thread_id_) {
    last_thread_ = &threads_[thread];
    last_thread_id_ = thread;
  }
  return *last_thread_;
}

void KiekerFlowBuilder::define_thread(uint32_t thread, uint64_t os_tid) {
  thread_state(thread).os_tid = os_tid;
}

bool KiekerFlowBuilder::metadata(std::string_view version, std::string_view controller,
                                 int64_t time_ns) {
  reset_to_defaults(record_, metadata_);
  record_.logging_timestamp = time_ns;
  record_.values = {pool_.intern(version),
                    pool_.intern(controller),
                    host_,
                    int64_t{1},
                    false,
                    int64_t{0},
                    std::string_view("NANOSECONDS"),
                    int64_t{0}};
  return sink_.on_record(record_);
}

bool KiekerFlowBuilder::emit_operation_event(const RecordSchema* schema, Thread& t,
                                             const FlowEvent& e) {
  const Operation* op = find_operation(e.op);
  std::string_view sig = op != nullptr ? op->signature : std::string_view("<unknown>");
  std::string_view component = op != nullptr ? op->component : std::string_view("");
  record_.schema = schema;
  record_.logging_timestamp = e.time_ns;
  record_.values.clear();
  record_.values.emplace_back(e.time_ns);
  record_.values.emplace_back(static_cast<int64_t>(t.trace_id));
  record_.values.emplace_back(t.order++);
  record_.values.emplace_back(sig);
  record_.values.emplace_back(component);
  if (schema == failed_) record_.values.emplace_back(pool_.intern(e.cause));
  return sink_.on_record(record_);
}

bool KiekerFlowBuilder::emit_typed_event(TypedFlowKind kind, Thread& t, const FlowEvent& e) {
  TypedOperationEvent out;
  out.kind = kind;
  out.timestamp = e.time_ns;
  out.trace_id = static_cast<int64_t>(t.trace_id);
  out.order_index = t.order++;
  out.operation = e.op;
  if (kind == TypedFlowKind::kAfterFailed) out.cause = e.cause;
  return typed_->on_operation_event(out);
}

// A thread's first events that are not a trace begin: the stream resumed
// in the middle of a trace whose start went elsewhere (a collector
// restarted while a writer resent from a chunk that began mid-trace).
// They are kept, not dropped: a trace of their own, with an id from a range
// the monitor does not use, which reconstruction then finds broken (an exit
// without its enter) and reports as such.
bool KiekerFlowBuilder::begin_orphan_trace(uint32_t thread, const FlowEvent& e) {
  FlowEvent begin;
  begin.kind = native::EventKind::kTraceBegin;
  begin.time_ns = e.time_ns;
  begin.trace_id = kOrphanTraceIdBase + next_orphan_trace_++;
  return event(thread, begin);
}

bool KiekerFlowBuilder::event(uint32_t thread, const FlowEvent& e) {
  Thread& t = thread_state(thread);
  switch (e.kind) {
    case native::EventKind::kTraceBegin: {
      t.trace_id = e.trace_id;
      t.order = 0;
      t.depth = 0;
      t.in_trace = true;
      bool root = e.parent_trace_id < 0 || e.parent_trace_id == 0;
      if (typed_ != nullptr) {
        TypedTraceStart start;
        start.timestamp = e.time_ns;
        start.trace_id = static_cast<int64_t>(e.trace_id);
        start.thread_id = static_cast<int64_t>(t.os_tid);
        start.session = "<no-session-id>";
        start.host = host_;
        start.parent_trace_id = root ? static_cast<int64_t>(e.trace_id) : e.parent_trace_id;
        start.parent_order_id = root ? -1 : e.parent_order_id;
        start.w3c = e.w3c;
        return typed_->on_trace_start(start);
      }
      record_.schema = trace_;
      record_.logging_timestamp = e.time_ns;
      record_.values.clear();
      record_.values.emplace_back(static_cast<int64_t>(e.trace_id));
      record_.values.emplace_back(static_cast<int64_t>(t.os_tid));
      record_.values.emplace_back(std::string_view("<no-session-id>"));
      record_.values.emplace_back(host_);
      record_.values.emplace_back(root ? static_cast<int64_t>(e.trace_id) : e.parent_trace_id);
      record_.values.emplace_back(static_cast<int64_t>(root ? -1 : e.parent_order_id));
      if (!sink_.on_record(record_)) return false;
      if (!e.w3c.present()) return true;
      record_.schema = trace_context_;
      record_.values.clear();
      record_.values.emplace_back(static_cast<int64_t>(e.trace_id));
      record_.values.emplace_back(static_cast<int64_t>(e.w3c.trace_id_high));
      record_.values.emplace_back(static_cast<int64_t>(e.w3c.trace_id_low));
      record_.values.emplace_back(static_cast<int64_t>(e.w3c.parent_span_id));
      return sink_.on_record(record_);
    }
    case native::EventKind::kEnter:
      if (!t.in_trace && !begin_orphan_trace(thread, e)) return false;
      ++t.depth;
      if (typed_ != nullptr) return emit_typed_event(TypedFlowKind::kBefore, t, e);
      return emit_operation_event(before_, t, e);
    case native::EventKind::kExit:
    case native::EventKind::kExitFailed:
      if (!t.in_trace && !begin_orphan_trace(thread, e)) return false;
      if (t.depth > 0) --t.depth;  // an exit whose enter came before the stream did
      if (typed_ != nullptr) {
        return emit_typed_event(e.kind == native::EventKind::kExit ? TypedFlowKind::kAfter
                                                                   : TypedFlowKind::kAfterFailed,
                                t, e);
      }
      return emit_operation_event(e.kind == native::EventKind::kExit ? after_ : failed_, t, e);
    case native::EventKind::kTraceContext:
      return true;  // readers deliver it with its trace begin (e.w3c)
    case native::EventKind::kLost:
      t.order += static_cast<int64_t>(e.lost);
      sink_.on_lost_events({e.time_ns, host_, static_cast<int64_t>(t.os_tid), e.lost});
      return true;
  }
  return true;
}

}  // namespace sonde::format
