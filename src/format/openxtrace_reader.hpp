// Reads OPEN.xtrace JSON (both published dialects, see openxtrace_json.hpp)
// into Kieker-shaped records plus sonde's callable records
// (openxtrace_to_records.hpp), so that reconstruction, stitching and every
// analysis work on it unchanged. read_log() dispatches here for a file
// that looks_like_openxtrace().
//
// Memory: one trace's JSON document at a time (openxtrace_splitter.hpp),
// plus the reader's string pool (every distinct string read, as for the
// Kieker readers). A single trace larger than memory cannot be read.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "format/log_reader.hpp"
#include "format/openxtrace_splitter.hpp"
#include "format/record.hpp"

namespace sonde::format {

struct OpenXtraceReadOptions {
  // Deeper JSON nesting is rejected as malformed (each call level of a
  // trace takes two: the callable object and its "children" array).
  size_t max_nesting_depth = openxtrace::kMaxOpenXtraceNesting;
  // Errors listed one by one; further ones are only counted.
  size_t max_listed_errors = 20;
};

// True for a regular file whose first bytes are JSON naming OPEN.xtrace
// keys or classes ("rootOfTrace", "org.spec.research.open.xtrace").
bool looks_like_openxtrace(const std::string& path);

// Reads an OPEN.xtrace JSON file. Never throws on bad input: a trace with
// a structural error is skipped with an error naming the file, the JSON
// path and the reason; malformed JSON ends the read with an error naming
// the byte. Traces before it are delivered.
LogReadStats read_openxtrace(const std::string& path, RecordSink& sink,
                             const OpenXtraceReadOptions& options = {});
// The same from a stream; `name` stands for the file in messages.
LogReadStats read_openxtrace(std::istream& in, const std::string& name, RecordSink& sink,
                             const OpenXtraceReadOptions& options = {});

}  // namespace sonde::format
