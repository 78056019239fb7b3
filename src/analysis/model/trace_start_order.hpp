// Hands traces on in the order Kieker's trace-analysis processes them.
// Kieker holds OperationExecutionRecord traces until they time out or the
// log ends and then releases them by start time (the entry's tin, then the
// trace id); sonde closes each one as soon as its entry record arrives,
// i.e. by end time. The order shows in Kieker's outputs (the order of
// executionTraces.txt, which trace represents an equivalence class, the
// numbering of aggregated call trees), so this buffer restores it within a
// bounded window: it holds at most `window` such traces, and at most
// `max_executions` executions in them, and releases the earliest-starting
// one when either is exceeded. Flow-event traces pass straight through:
// Kieker, too, processes them as they complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

class TraceStartOrder : public TraceSink {
 public:
  // `window` 0 passes everything through unordered. `next` must outlive this.
  TraceStartOrder(TraceSink& next, size_t window, size_t max_executions = 500'000);

  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override { next_.on_invalid_trace(trace); }

  // Releases every held trace, in order. Call at the end of input.
  void flush();

  // Traces that arrived after a later-starting one had already been
  // released (the window was too small): these went out of Kieker's order.
  size_t late() const { return late_; }

 private:
  struct Key {
    int64_t entry_tin;
    int64_t trace_id;
    bool operator<(const Key& o) const {
      return entry_tin != o.entry_tin ? entry_tin < o.entry_tin : trace_id < o.trace_id;
    }
  };
  static Key key_of(const Trace& trace);
  void release_first();

  TraceSink& next_;
  size_t window_;
  size_t max_executions_;
  size_t held_executions_ = 0;
  size_t late_ = 0;
  bool released_any_ = false;
  Key last_released_{0, 0};
  std::vector<Trace> held_;  // a min-heap on Key
};

}  // namespace sonde::analysis
