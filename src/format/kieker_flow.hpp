// Turns per-thread enter/exit streams into Kieker flow records with Kieker's
// trace semantics (anchor-kieker-moobench.md §1.3): a TraceMetadata when a
// trace begins, then Before/After/AfterFailed events whose order indexes
// count 0, 1, 2, … across both kinds. Events lost while writing leave a gap
// in the order indexes, so Kieker's reconstruction rejects the trace
// instead of presenting an incomplete one as whole.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/native_format.hpp"
#include "format/operation_name.hpp"
#include "format/record.hpp"
#include "format/string_pool.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::format {

struct FlowEvent {
  native::EventKind kind;
  int64_t time_ns = 0;
  uint32_t op = 0;
  std::string_view cause;
  uint64_t trace_id = 0;
  int64_t parent_trace_id = -1;
  int32_t parent_order_id = -1;
  uint64_t lost = 0;
  w3c::Context w3c;  // trace begin: the W3C trace it continued, if sonde did not start it
};

class KiekerFlowBuilder {
 public:
  // Operations are named in `form` (operation_name.hpp): C++ for sonde's
  // views, Kieker's for Kieker's files.
  KiekerFlowBuilder(RecordSink& sink, StringPool& pool, NameForm form = NameForm::kCpp);

  void set_host(std::string_view host) { host_ = pool_.intern(host); }
  void define_operation(uint32_t op, std::string_view name, std::string_view module,
                        native::OperationKind kind = native::OperationKind::kFunction);
  void define_thread(uint32_t thread, uint64_t os_tid);
  // Emits a KiekerMetadataRecord (once per log, before the first trace).
  bool metadata(std::string_view version, std::string_view controller, int64_t time_ns);
  // Returns false when the sink asks to stop.
  bool event(uint32_t thread, const FlowEvent& e);

 private:
  struct Thread {
    uint64_t os_tid = 0;
    uint64_t trace_id = 0;
    int64_t order = 0;
    uint32_t depth = 0;
    bool in_trace = false;
  };
  struct Operation {
    std::string_view signature;
    std::string_view component;
  };
  bool emit_operation_event(const RecordSchema* schema, Thread& t, const FlowEvent& e);
  bool begin_orphan_trace(uint32_t thread, const FlowEvent& e);

  bool emit_typed_event(TypedFlowKind kind, Thread& t, const FlowEvent& e);

  RecordSink& sink_;
  TypedFlowSink* typed_;  // the sink's fast path, or null
  StringPool& pool_;
  NameForm form_;
  std::string_view host_ = "<default-host>";
  const Operation* find_operation(uint32_t op) const;
  Thread& thread_state(uint32_t thread);

  // Operation ids are dense (the monitor numbers them from 1), so a vector.
  std::vector<Operation> ops_;
  std::vector<bool> op_defined_;
  // Ids come from the file: a corrupt huge one goes here instead of making
  // the vector allocate gigabytes.
  static constexpr uint32_t kMaxDenseOperationId = 1u << 20;
  std::unordered_map<uint32_t, Operation> sparse_ops_;
  std::unordered_map<uint32_t, Thread> threads_;
  // Trace ids for events whose trace began before the stream did.
  static constexpr uint64_t kOrphanTraceIdBase = uint64_t{0x7f} << 56;
  uint64_t next_orphan_trace_ = 1;
  // Events arrive in per-thread runs; node addresses of threads_ are stable.
  uint32_t last_thread_id_ = 0;
  Thread* last_thread_ = nullptr;
  Record record_;
  const RecordSchema* metadata_;
  const RecordSchema* trace_;
  const RecordSchema* trace_context_;
  const RecordSchema* before_;
  const RecordSchema* after_;
  const RecordSchema* failed_;
};

}  // namespace sonde::format
