// Writes stitched traces as OPEN.xtrace JSON: a JSON array with one Trace
// object per line, written as each trace arrives (streaming), closed by
// finish(). The dialect is the OPEN.xtrace fork's (JsonOPENxtraceSerializer:
// "rootOfTrace", "rootOfSubTrace", "children", "@class", -1 / null for
// missing values) with every key its JsonOPENxtraceDeserializer reads, so
// that both the fork and sonde's reader accept it; docs/formats/openxtrace.md
// has the field-by-field mapping.
//
// Each part of a StitchedTrace becomes a SubTrace (subTraceId = its sonde
// trace id, Location host = its host), reached from the calling execution
// through a RemoteInvocation whose targetSubTrace holds it inline.
// Executions become MethodInvocations (HTTPRequestProcessing where an
// HttpRequest record describes them); the callable records of each trace
// (feed them to callable_records()) become DatabaseInvocation,
// LoggingInvocation, ExceptionThrow and RemoteInvocation callees at their
// recorded position. A failed execution gets an ExceptionThrow callee.
// Timestamps are milliseconds as the format wants; the exact entry time in
// ns travels as additional information "sonde.timestampNanos" and
// durations (responseTime, exclusiveTime) are ns.
#pragma once

#include <cstdint>
#include <ostream>

#include "analysis/model/stitched_trace.hpp"
#include "analysis/reconstruct/callable_record_buffer.hpp"
#include "format/record.hpp"

namespace sonde::analysis {

struct OpenXtraceWriterOptions {
  // Bound on callable records waiting for their trace (CallableRecordBuffer).
  size_t max_pending_callable_records = 1'000'000;
};

struct OpenXtraceWriterStats {
  uint64_t traces = 0;
  uint64_t sub_traces = 0;
  uint64_t callables = 0;                 // every callable object written
  uint64_t callable_records_written = 0;  // records placed into a trace
  uint64_t callable_records_dropped = 0;  // over the bound, or their trace never came
};

class OpenXtraceWriter : public StitchedTraceSink {
 public:
  explicit OpenXtraceWriter(std::ostream& out, OpenXtraceWriterOptions options = {});

  // Where the log's records go too (e.g. through a tee next to the
  // reconstructor): the callable ones are kept for their trace.
  format::RecordSink& callable_records() { return callables_; }

  void on_stitched_trace(const StitchedTrace& trace) override;

  // Closes the JSON array (an empty one if no trace came). Call once.
  void finish();

  const OpenXtraceWriterStats& stats() const { return stats_; }
  // False once the stream has failed.
  bool ok() const { return out_.good(); }

 private:
  std::ostream& out_;
  CallableRecordBuffer callables_;
  OpenXtraceWriterStats stats_;
  bool finished_ = false;
};

}  // namespace sonde::analysis
