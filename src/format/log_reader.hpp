// Reads any log sonde understands into Kieker-shaped records: a native
// `.sonde` file, a directory of them, a Kieker filesystem log directory
// (kieker.map + .dat/.bin files), or an OPEN.xtrace JSON file
// (openxtrace_reader.hpp). Native thread events are expanded into
// TraceMetadata / BeforeOperationEvent / AfterOperationEvent /
// AfterOperationFailedEvent records with Kieker's trace semantics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/operation_name.hpp"
#include "format/record.hpp"

namespace sonde::format {

struct LogReadStats {
  bool ok = true;
  std::vector<std::string> errors;    // each names the file, position and reason
  std::vector<std::string> warnings;  // e.g. skipped unknown record types, truncated files
  uint64_t records = 0;               // records delivered to the sink
  uint64_t skipped = 0;               // records that could not be delivered (unknown type, ...)
  uint64_t lost_reported = 0;         // events the monitor reported as lost while writing
  std::vector<std::string> files;     // data files read, in order
  // Why each flight-recorder snapshot read was taken (its META
  // snapshot.reason, docs/flight-recorder.md), in file order.
  std::vector<std::string> snapshot_reasons;
};

enum class LogKind { kUnknown, kNative, kKiekerDirectory, kOpenXtrace };

LogKind detect_log_kind(const std::string& path);

// Reads the log at `path` (file or directory). Never throws on bad input.
// A native log's operations are named in `form` (operation_name.hpp);
// Kieker logs and OPEN.xtrace files keep the names they carry.
LogReadStats read_log(const std::string& path, RecordSink& sink, NameForm form = NameForm::kCpp);

// Reads a Kieker filesystem log directory (implemented with the Kieker codecs).
LogReadStats read_kieker_directory(const std::string& dir, RecordSink& sink);
// Reads one native file, expanding events into Kieker-shaped records.
LogReadStats read_native_as_records(const std::string& path, RecordSink& sink,
                                    NameForm form = NameForm::kCpp);

}  // namespace sonde::format
