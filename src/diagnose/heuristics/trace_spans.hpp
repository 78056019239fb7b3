// The spans of an experiment's traces (what experiment_traces() keeps)
// read without reconstructing them: a native log's flow events, taken in
// typed form, update each open trace's start, end and execution count, and
// the trace is complete when its call stack empties. No event buffer and
// no executions are built: building them was most of the diagnosis for a
// program with 10^9 events per case (scenario t03). Not timed on its own.
//
// Exactly what the reconstructor would give, for the logs sonde writes:
// metadata first and once, order indexes 0, 1, 2, ... in arrival order,
// every after event closing the operation of the innermost open before.
// Anything else (a Kieker log's generic flow records, execution records,
// an event of an unknown trace, an out-of-order index, a mismatched
// after, a trace id reused) marks the read `irregular`, and the caller
// reconstructs the log instead.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "diagnose/heuristics/experiment_traces.hpp"
#include "format/record.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::diagnose::heuristics {

class TraceSpanReader : public format::RecordSink, private format::TypedFlowSink {
 public:
  // `keep(span)` is called for every complete trace.
  explicit TraceSpanReader(std::function<void(const TraceSpan&)> keep) : keep_(std::move(keep)) {}

  bool on_record(const format::Record& r) override;
  format::TypedFlowSink* typed_flow() override { return this; }

  // The read met something only a reconstruction judges right.
  bool irregular() const { return irregular_; }
  // Traces never completed (as the reconstructor's invalid ones, when regular).
  size_t unfinished() const { return open_.size(); }

 private:
  struct Open {
    TraceSpan span;
    int64_t next_order_index = 0;
    std::vector<uint32_t> stack;  // operation ids of the open befores
  };

  void on_source_begin() override {}
  void on_operation(uint32_t, std::string_view, std::string_view) override {}
  bool on_trace_start(const format::TypedTraceStart& start) override;
  bool on_operation_event(const format::TypedOperationEvent& event) override;
  // Stops the read: the caller reconstructs instead.
  bool give_up() {
    irregular_ = true;
    return false;
  }

  std::function<void(const TraceSpan&)> keep_;
  std::unordered_map<int64_t, Open> open_;
  std::unordered_set<int64_t> seen_;  // trace ids met, to catch a reused one
  // The reconstructor's default bound on open traces (it evicts beyond).
  static constexpr size_t kMaxOpen = 1'000'000;
  bool irregular_ = false;
};

}  // namespace sonde::diagnose::heuristics
