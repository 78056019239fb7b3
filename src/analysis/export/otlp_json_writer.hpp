// Stitched traces as OpenTelemetry spans: OTLP/JSON, one
// ExportTraceServiceRequest per line (JSON Lines), the file format of the
// OpenTelemetry Collector's otlpjsonfile receiver and file exporter.
//
// A line holds up to max_traces_per_line traces and at most about
// max_line_bytes bytes: the collector's file reader cuts longer lines
// (fileconsumer max_log_size, 1 MiB by default), which would break the JSON.
// A trace too big for one line is split across lines at span boundaries,
// which OTLP allows (spans are grouped by traceId downstream). Spans are
// grouped by resource: one ResourceSpans per host, with service.name and
// host.name.
//
// Protobuf JSON mapping as OTLP specifies it: lowerCamelCase keys, traceId
// and spanId as lowercase hex (not base64), enums (kind, status.code) as
// integers, 64-bit integers (times, intValue) as decimal strings.
//
// Spans and their ids: otlp_spans.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/export/otlp_spans.hpp"
#include "analysis/model/stitched_trace.hpp"

namespace sonde::analysis {

struct OtlpJsonOptions {
  // service.name of every resource; empty: the host name (each host is a
  // service, as Kieker's deployment view has it).
  std::string service_name;
  // InstrumentationScope: name "sonde", this version (omitted when empty).
  std::string scope_version;
  // Span names: "Catalog.getBook(..)" (short) or the full signature. The
  // full signature is always in the attribute sonde.operation.
  bool short_labels = true;
  // A line is written once this many traces are buffered, or before it
  // would grow past this many bytes (one span longer than that still gets
  // a line of its own).
  size_t max_traces_per_line = 64;
  size_t max_line_bytes = 1'000'000;
};

struct OtlpJsonStats {
  uint64_t traces = 0;
  uint64_t spans = 0;
  uint64_t failed_spans = 0;  // status ERROR
  uint64_t lines = 0;         // ExportTraceServiceRequests written
};

class OtlpJsonWriter : public StitchedTraceSink {
 public:
  // Writes to `out`, which must outlive the writer.
  explicit OtlpJsonWriter(std::ostream& out, OtlpJsonOptions options = {});
  OtlpJsonWriter(const OtlpJsonWriter&) = delete;
  OtlpJsonWriter& operator=(const OtlpJsonWriter&) = delete;

  void on_stitched_trace(const StitchedTrace& trace) override;

  // Writes the buffered spans as one line (nothing if none is buffered).
  void flush();
  // Flushes; call once after the last trace. Check the stream's state
  // afterwards for write errors.
  void finish() { flush(); }

  const OtlpJsonStats& stats() const { return stats_; }

 private:
  struct ResourceBatch {
    std::string prefix;  // the ResourceSpans up to its span list
    std::string spans;   // serialized spans, comma-separated
  };

  std::string resource_prefix(const std::string& host) const;
  void add_span(const std::string& host, const std::string& span);

  std::ostream& out_;
  OtlpJsonOptions options_;
  std::vector<ResourceBatch> batch_;  // in order of first appearance
  std::map<std::string, size_t> batch_index_;
  size_t buffered_traces_ = 0;
  size_t buffered_spans_ = 0;
  size_t buffered_bytes_ = 0;  // of the line flush() would write
  OtlpJsonStats stats_;
};

}  // namespace sonde::analysis
