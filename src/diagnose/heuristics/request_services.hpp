// Which service (the load driver's request name, e.g. "GET /search") each
// trace of an experiment served. The load driver knows the service of a
// request but not the trace id the program gave it; the monitor knows the
// trace but not the request. Both stamp the same clock (epoch ns on one
// machine), so a request's trace is the one that runs inside the request's
// interval and fills it best: the smallest gap between the request's start
// and the trace's start plus the trace's end and the request's end. Traces
// of background work (a queue consumer) that happen to run inside a request
// leave larger gaps and stay unattributed. Heuristics that need the thesis'
// "correlate services and queries via traces" (Expensive Database Call)
// use this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose::heuristics {

struct RequestServices {
  // trace id -> service; child traces (work handed to another thread) get
  // the service of their root trace.
  std::map<int64_t, std::string> service_of_trace;
  // trace id -> the request it served: an index into the experiment's
  // `requests` (file order); child traces map to their root's request.
  std::map<int64_t, size_t> request_of_trace;
  size_t requests = 0;  // successful requests in the experiment
  size_t matched = 0;   // of them, attributed to a trace
  // Of the matched, those with exactly one trace inside their interval: no
  // choice was made for them. The rest took the best fit among several
  // (concurrent requests), which can be wrong.
  size_t unambiguous = 0;
  // The matched requests that took the best fit among several traces (an
  // index into `requests`, as request_of_trace): the ones whose trace may
  // be another request's.
  std::set<size_t> ambiguous_requests;
  std::string error;  // the log could not be read
};

// Cached per experiment (the traces are read once, by experiment_traces()).
const RequestServices& request_services(const Experiment& e);

}  // namespace sonde::diagnose::heuristics
