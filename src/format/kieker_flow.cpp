#include "format/kieker_flow.hpp"

#include "format/kieker_signature.hpp"

namespace sonde::format {

KiekerFlowBuilder::KiekerFlowBuilder(RecordSink& sink, StringPool& pool)
    : sink_(sink),
      pool_(pool),
      metadata_(find_builtin_schema(kieker_class::kMetadata)),
      trace_(find_builtin_schema(kieker_class::kTraceMetadata)),
      before_(find_builtin_schema(kieker_class::kBeforeOperation)),
      after_(find_builtin_schema(kieker_class::kAfterOperation)),
      failed_(find_builtin_schema(kieker_class::kAfterOperationFailed)) {}

void KiekerFlowBuilder::define_operation(uint32_t op, std::string_view name,
                                         std::string_view module) {
  KiekerSignature sig = kieker_signature(name, module);
  ops_[op] = {pool_.intern(sig.operation), pool_.intern(sig.component)};
}

void KiekerFlowBuilder::define_thread(uint32_t thread, uint64_t os_tid) {
  threads_[thread].os_tid = os_tid;
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
  auto it = ops_.find(e.op);
  std::string_view sig = it != ops_.end() ? it->second.signature : std::string_view("<unknown>");
  std::string_view component = it != ops_.end() ? it->second.component : std::string_view("");
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

bool KiekerFlowBuilder::event(uint32_t thread, const FlowEvent& e) {
  Thread& t = threads_[thread];
  switch (e.kind) {
    case native::EventKind::kTraceBegin: {
      t.trace_id = e.trace_id;
      t.order = 0;
      t.depth = 0;
      t.in_trace = true;
      bool root = e.parent_trace_id < 0 || e.parent_trace_id == 0;
      record_.schema = trace_;
      record_.logging_timestamp = e.time_ns;
      record_.values.clear();
      record_.values.emplace_back(static_cast<int64_t>(e.trace_id));
      record_.values.emplace_back(static_cast<int64_t>(t.os_tid));
      record_.values.emplace_back(std::string_view("<no-session-id>"));
      record_.values.emplace_back(host_);
      record_.values.emplace_back(root ? static_cast<int64_t>(e.trace_id) : e.parent_trace_id);
      record_.values.emplace_back(static_cast<int64_t>(root ? -1 : e.parent_order_id));
      return sink_.on_record(record_);
    }
    case native::EventKind::kEnter:
      if (!t.in_trace) return true;
      ++t.depth;
      return emit_operation_event(before_, t, e);
    case native::EventKind::kExit:
    case native::EventKind::kExitFailed:
      if (!t.in_trace || t.depth == 0) {
        return true;
      }
      --t.depth;
      return emit_operation_event(e.kind == native::EventKind::kExit ? after_ : failed_, t, e);
    case native::EventKind::kLost:
      t.order += static_cast<int64_t>(e.lost);
      return true;
  }
  return true;
}

}  // namespace sonde::format
