// Shared by the Kieker file and TCP writers: turns decoded thread events
// into Kieker records (through format::KiekerFlowBuilder) and hands each
// record to an output. Only record types Kieker knows are passed on, since
// Kieker's readers stop at unknown types; the rest are counted.
#pragma once

#include <functional>
#include <string>

#include "format/kieker_flow.hpp"
#include "format/string_pool.hpp"
#include "monitor/writers/event_writer.hpp"

namespace sonde::monitor {

class KiekerRecords final : public format::RecordSink {
 public:
  // `emit` returns false if the record could not be written.
  using Emit = std::function<bool(const format::Record&)>;
  explicit KiekerRecords(Emit emit)
      : emit_(std::move(emit)), flow_(*this, pool_, format::NameForm::kKieker) {}

  void start(const ProcessInfo& p, int64_t start_ns);
  void operation(const OperationInfo& op) {
    flow_.define_operation(op.id, op.name, op.module, op.kind);
  }
  void thread(const ThreadInfo& t) { flow_.define_thread(t.index, t.os_tid); }
  void clock(const Calibration& c) { calibration_ = c; }
  // Returns the number of probe events (enter/exit) that were not written.
  uint64_t events(const DecodedEvent* e, size_t n, uint32_t thread);
  void record(const format::Record& r);

  uint64_t records_skipped() const { return skipped_; }
  bool on_record(const format::Record& r) override;

 private:
  Emit emit_;
  format::StringPool pool_;
  format::KiekerFlowBuilder flow_;
  Calibration calibration_;
  bool last_ok_ = true;
  uint64_t skipped_ = 0;
};

}  // namespace sonde::monitor
