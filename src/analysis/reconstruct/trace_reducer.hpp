// Trace reduction, the live-analysis stage MooBench measures as D (the
// thesis §11.6, after ExplorViz): traces with the same shape (the same
// operations at the same depths, in the same order, on the same host) that
// start within one time window become one reduced trace carrying how many
// traces it stands for and their response times (per trace and per call
// position: min, mean, max). A collector that indexes reduced traces
// writes one row per shape and window instead of one per trace.
//
// Invalid traces are never merged: they go on, one by one, to the sink
// given for them. Nothing is dropped: every valid trace is counted in
// exactly one reduced trace (traces_in() = the sum of their `traces`).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

// One call position of a reduced trace's shape.
struct ReducedExecution {
  std::string operation;
  std::string component;
  int32_t eoi = 0;
  int32_t ess = 0;
  double mean_offset = 0;  // mean of (tin - the trace's start), ns
  double mean_duration = 0;
  int64_t min_duration = 0;
  int64_t max_duration = 0;
  uint64_t failed = 0;  // of `traces`, how many left this call by an exception
};

struct ReducedTrace {
  std::string host;
  int64_t first_trace_id = -1;  // the first trace merged (an example to look up)
  int64_t first_start = 0;      // earliest and latest start of the merged traces
  int64_t last_start = 0;
  uint64_t traces = 0;
  uint64_t failed_traces = 0;  // with at least one failed call
  double mean_duration = 0;
  int64_t min_duration = 0;
  int64_t max_duration = 0;
  std::vector<ReducedExecution> executions;  // eoi order
};

class ReducedTraceSink {
 public:
  virtual ~ReducedTraceSink() = default;
  virtual void on_reduced_trace(const ReducedTrace& trace) = 0;
};

struct ReductionOptions {
  // Traces starting within this much log time of a window's first trace
  // share the window; a later start closes it (and emits its shapes).
  int64_t window_ns = 1'000'000'000;
  // Distinct shapes kept per window; one more closes the window early, so
  // memory stays bounded whatever the traffic.
  size_t max_shapes = 10'000;
};

class TraceReducer final : public TraceSink {
 public:
  TraceReducer(ReducedTraceSink& reduced, TraceSink& invalid, ReductionOptions options = {});
  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override;
  // Emits what the open window holds (end of input, or a periodic flush).
  void flush();

  uint64_t traces_in() const { return traces_in_; }
  uint64_t reduced_out() const { return reduced_out_; }

 private:
  struct Shape {
    ReducedTrace reduced;
    double duration_sum = 0;
    std::vector<double> offset_sum, call_duration_sum;
  };
  static uint64_t shape_hash(const Trace& trace);
  static bool same_shape(const ReducedTrace& r, const Trace& trace);
  Shape& shape_for(const Trace& trace);

  ReducedTraceSink& reduced_;
  TraceSink& invalid_;
  ReductionOptions options_;
  // By shape hash; a collision chains the shapes that share it.
  std::unordered_map<uint64_t, std::vector<Shape>> shapes_;
  size_t shape_count_ = 0;
  int64_t window_start_ = 0;
  uint64_t traces_in_ = 0;
  uint64_t reduced_out_ = 0;
};

}  // namespace sonde::analysis
