// Stitched traces as Chrome Trace Event JSON, the format Perfetto UI,
// speedscope and chrome://tracing open. The object form is written:
//
//   {"traceEvents":[
//   {"name":"process_name","ph":"M","pid":1,"tid":1000001,"args":{"name":"host1"}},
//   {"name":"Catalog.getBook(..)","cat":"sonde","ph":"X","ts":3600000.125,"dur":12.5,...},
//   ...
//   ],"displayTimeUnit":"ns","otherData":{...}}
//
// one event per line, streamed as traces arrive; finish() closes the
// document. Every execution is one complete event ("X"); ts and dur are in
// microseconds with three decimals, so nanoseconds survive. Timestamps are
// relative to a time origin (see ChromeTraceOptions) because viewers read
// them as doubles, which cannot hold epoch nanoseconds exactly.
//
// Tracks, nesting and flows: trace_tracks.hpp (one pid per host, one tid
// per recorded thread or lane; each execution clamped into its nearest
// caller on the same track, args.clamped says when). A continued part is
// linked to the execution that handed its context on by a flow ("s" on the
// parent execution, "f" with "bp":"e" on the part's first execution, one id
// per link), drawn as an arrow in Perfetto UI.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "analysis/export/trace_tracks.hpp"
#include "analysis/model/stitched_trace.hpp"

namespace sonde::analysis {

struct ChromeTraceOptions {
  // Event names: "Catalog.getBook(..)" (short) or the full signature. The
  // full signature is always in args.operation.
  bool short_labels = true;
  // ts = (time - origin) / 1000. Unset: the start of the first trace
  // written, floored to a whole hour, minus one hour, so traces that end
  // later but started earlier (up to an hour) still get ts >= 0. The origin
  // is recorded in otherData.time_origin_ns.
  std::optional<int64_t> time_origin_ns;
  // Flow arrows from parent executions to continued parts.
  bool flows = true;
};

struct ChromeTraceStats {
  uint64_t traces = 0;
  uint64_t complete_events = 0;  // "X": one per execution
  uint64_t flows = 0;            // "s"/"f" pairs
  uint64_t processes = 0;
  uint64_t threads = 0;  // tracks, lanes included
  uint64_t clamped = 0;  // executions moved inside their caller's span
};

class ChromeTraceWriter : public StitchedTraceSink {
 public:
  // Writes to `out`, which must outlive the writer. Nothing is written
  // before the first trace or finish().
  explicit ChromeTraceWriter(std::ostream& out, ChromeTraceOptions options = {});
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  void on_stitched_trace(const StitchedTrace& trace) override;

  // Closes the JSON document (an empty trace list if no trace came). Call
  // once after the last trace; later traces are ignored. Check the stream's
  // state afterwards for write errors.
  void finish();

  const ChromeTraceStats& stats() const { return stats_; }
  int64_t time_origin_ns() const { return origin_.value_or(0); }

 private:
  void begin_event();
  void write_metadata(const char* name, int32_t pid, int32_t tid, const std::string& value);
  void write_flow_event(char phase, uint64_t id, int64_t time, TrackId track);

  std::ostream& out_;
  ChromeTraceOptions options_;
  std::optional<int64_t> origin_;
  bool started_ = false;
  bool finished_ = false;
  bool first_event_ = true;
  uint64_t next_flow_id_ = 1;
  TrackAllocator tracks_;
  ChromeTraceStats stats_;
};

}  // namespace sonde::analysis
