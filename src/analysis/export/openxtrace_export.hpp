// The whole way from a log to OPEN.xtrace JSON, for `sonde convert --to
// openxtrace` and other callers: read any log read_log() understands,
// reconstruct traces, stitch continued ones (TraceStitcher), and write them
// (OpenXtraceWriter) with the log's callable records.
#pragma once

#include <ostream>
#include <string>

#include "analysis/export/openxtrace_writer.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "analysis/reconstruct/trace_stitcher.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis {

struct OpenXtraceExportOptions {
  ReconstructionOptions reconstruction;
  StitchingOptions stitching;
  OpenXtraceWriterOptions writer;
};

struct OpenXtraceExportResult {
  format::LogReadStats read;
  ReconstructionStats reconstruction;
  StitchingStats stitching;
  OpenXtraceWriterStats written;
  bool stream_ok = true;  // false if writing to the stream failed

  // Read without errors and written completely. Invalid traces (see
  // reconstruction.invalid_traces) are left out and do not make it false.
  bool ok() const { return read.ok && stream_ok; }
};

// Writes every valid trace of the log at `log_path` to `out` as one
// OPEN.xtrace JSON array. Never throws on bad input.
OpenXtraceExportResult export_openxtrace(const std::string& log_path, std::ostream& out,
                                         const OpenXtraceExportOptions& options = {});

}  // namespace sonde::analysis
