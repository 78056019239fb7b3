// Exports the traces of any readable log to a trace format: reads the log,
// reconstructs its traces, stitches continued traces (threads, processes)
// into one, and streams them to the format's writer. Memory stays bounded by
// the open traces and groups, not by the size of the log.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "analysis/reconstruct/trace_stitcher.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis {

enum class TraceFormat : uint8_t {
  kOpenXtrace,  // OPEN.xtrace JSON (docs/formats/openxtrace.md)
  kChrome,      // Chrome Trace Event JSON (Perfetto UI, speedscope)
  kOtlp,        // OTLP JSON Lines (OpenTelemetry ExportTraceServiceRequest per line)
  kPerfetto,    // Perfetto protobuf trace (docs/formats/perfetto.md)
};

// "openxtrace", "chrome", "otlp", "perfetto".
bool parse_trace_format(std::string_view text, TraceFormat* out);
std::string_view to_string(TraceFormat format);

struct TraceExportOptions {
  ReconstructionOptions reconstruction;
  StitchingOptions stitching;
};

struct TraceExportResult {
  format::LogReadStats read;
  uint64_t traces = 0;          // stitched traces written
  uint64_t executions = 0;      // executions in them (Chrome, OTLP, Perfetto)
  uint64_t counter_values = 0;  // Perfetto: sampler values written as counters
  uint64_t loss_markers = 0;    // Perfetto: lost markers drawn as instants
  uint64_t callables = 0;       // OPEN.xtrace: callables written (invocations, SQL, HTTP, ...)
  uint64_t callable_records_dropped = 0;  // OPEN.xtrace: callable records with no trace to go to
  uint64_t stitched_parts = 0;            // continued parts attached below a parent
  uint64_t invalid_traces = 0;            // reconstructed but invalid: not exported
  std::string error;                      // the output could not be written
  bool ok() const { return read.ok && error.empty(); }
};

TraceExportResult export_traces(const std::string& input, TraceFormat format,
                                const std::string& output, const TraceExportOptions& options = {});

}  // namespace sonde::analysis
