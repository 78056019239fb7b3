// The reconstructed traces of one experiment's log (flow events of the
// response_time probe), for heuristics that match requests to the traces
// that served them (Time Outside the Application, request_services).
// Read once per experiment and cached, as one small summary per trace:
// a real program's log can hold 10^8 executions (a one-line function
// called 50,000 times per request), and keeping them whole exhausted the
// machine's memory (scenario t03, 2026-12-05). Heuristics that need the
// executions of some traces stream them (for_each_trace).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "analysis/model/trace_model.hpp"
#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose::heuristics {

struct TraceSpan {
  int64_t trace_id = -1;
  int64_t thread_id = -1;        // -1 when unknown
  int64_t parent_trace_id = -1;  // -1 or == trace_id for a root trace
  int64_t start = 0;             // earliest entry, ns
  int64_t end = 0;               // latest exit, ns
  uint64_t executions = 0;

  bool root() const { return parent_trace_id == -1 || parent_trace_id == trace_id; }
  int64_t duration() const { return analysis::saturating_span(start, end); }
};

struct ExperimentTraces {
  std::map<int64_t, TraceSpan> traces;  // valid traces by trace id
  size_t invalid = 0;                   // traces that could not be reconstructed
  std::string error;                    // the log could not be read
};

// Traces that start inside the experiment's stable phase (all, when it has none).
const ExperimentTraces& experiment_traces(const Experiment& e);

// Reads the experiment's log again and calls `visit` with every valid
// trace that experiment_traces() keeps, one at a time: the trace and its
// strings live only during the call. Returns an error when the log could
// not be read (empty when it was).
std::string for_each_trace(const Experiment& e,
                           const std::function<void(const analysis::Trace&)>& visit);

}  // namespace sonde::diagnose::heuristics
