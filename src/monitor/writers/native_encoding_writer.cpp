#include "monitor/writers/native_encoding_writer.hpp"

#include "monitor/registry.hpp"

namespace sonde::monitor {

void NativeEncodingWriter::operation(const OperationInfo& op) {
  writer_->operation(op.id, op.name, op.kind, op.module, op.address, op.file, op.line);
}

void NativeEncodingWriter::thread(const ThreadInfo& t) {
  writer_->thread(t.index, t.os_tid, t.name);
}

void NativeEncodingWriter::events(uint32_t thread, const DecodedEvent* e, size_t n) {
  if (n == 0) return;
  using format::native::EventKind;
  // Causes are interned before the block: STRING items may not sit inside it.
  for (size_t i = 0; i < n; ++i) {
    if (e[i].kind == EventKind::kExitFailed)
      cause_ids_[i] = writer_->string_id(cause_text(e[i].cause));
  }
  writer_->begin_events(thread, e[0].time);
  for (size_t i = 0; i < n; ++i) {
    const DecodedEvent& ev = e[i];
    switch (ev.kind) {
      case EventKind::kEnter:
        writer_->enter(ev.time, ev.op);
        break;
      case EventKind::kExit:
        writer_->exit(ev.time, ev.op);
        break;
      case EventKind::kExitFailed:
        writer_->exit_failed(ev.time, ev.op, cause_ids_[i]);
        break;
      case EventKind::kTraceBegin:
        writer_->trace_begin(ev.time, ev.trace_id, ev.parent_trace_id, ev.parent_order_id, ev.w3c);
        break;
      case EventKind::kLost:
        writer_->lost(ev.time, ev.lost);
        break;
      case EventKind::kTraceContext:
        break;  // decode() puts it into its trace begin (ev.w3c)
    }
  }
  writer_->end_events();
  cause_ids_.clear();
  flush(false);
}

void NativeEncodingWriter::clock(const Calibration& c) {
  writer_->clock(c.ref_raw(), c.ref_epoch_ns(), c.ns_per_tick());
}

}  // namespace sonde::monitor
