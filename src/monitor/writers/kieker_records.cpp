#include "monitor/writers/kieker_records.hpp"

#include "monitor/registry.hpp"

namespace sonde::monitor {

void KiekerRecords::start(const ProcessInfo& p, int64_t start_ns) {
  flow_.set_host(p.hostname);
  flow_.metadata("sonde-0.1", p.application, start_ns);
}

bool KiekerRecords::on_record(const format::Record& r) {
  last_ok_ = emit_(r);
  return true;
}

uint64_t KiekerRecords::events(const DecodedEvent* e, size_t n, uint32_t thread) {
  using format::native::EventKind;
  uint64_t lost = 0;
  for (size_t i = 0; i < n; ++i) {
    format::FlowEvent f;
    f.kind = e[i].kind;
    f.time_ns = calibration_.to_epoch_ns(e[i].time);
    f.op = e[i].op;
    if (f.kind == EventKind::kExitFailed) f.cause = pool_.intern(cause_text(e[i].cause));
    f.trace_id = e[i].trace_id;
    f.parent_trace_id = e[i].parent_trace_id;
    f.parent_order_id = e[i].parent_order_id;
    f.lost = e[i].lost;
    // (Not the W3C trace context: its record is sonde's, and Kieker's tools
    // reject a log with a record class they do not know.)
    last_ok_ = true;
    flow_.event(thread, f);
    bool probe_event = f.kind == EventKind::kEnter || f.kind == EventKind::kExit ||
                       f.kind == EventKind::kExitFailed;
    if (probe_event && !last_ok_) ++lost;
  }
  return lost;
}

void KiekerRecords::record(const format::Record& r) {
  if (r.schema->class_name.rfind("kieker.", 0) != 0) {
    ++skipped_;
    return;
  }
  emit_(r);
}

}  // namespace sonde::monitor
