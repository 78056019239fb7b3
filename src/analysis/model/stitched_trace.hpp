// A trace stitched across threads and processes: the root trace plus every
// trace that continued its context (TraceMetadata parentTraceId /
// parentOrderId, set by sonde::Context or a W3C traceparent), one part per
// location, as OPEN.xtrace's Trace with its SubTraces and RemoteInvocations.
//
// Exporters (OPEN.xtrace, OTLP, Chrome) consume StitchedTraces so a request
// that crossed threads or processes comes out as one trace; a trace nobody
// continued is a StitchedTrace with one part.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct SubTrace {
  Trace trace;
  // Index of the parent part in StitchedTrace::parts; -1 for the root part.
  int32_t parent = -1;
  // Index into the parent part's executions of the execution that handed the
  // context on (the caller of this part); -1 for the root or when unknown.
  int32_t parent_execution = -1;
};

struct StitchedTrace {
  // parts[0] is the root; every parent precedes its children. The root's
  // trace.parent_trace_id differs from its trace_id when its own parent was
  // never seen (e.g. a traceparent from a process whose log is not read).
  std::vector<SubTrace> parts;
};

class StitchedTraceSink {
 public:
  virtual ~StitchedTraceSink() = default;
  virtual void on_stitched_trace(const StitchedTrace& trace) = 0;
};

}  // namespace sonde::analysis
