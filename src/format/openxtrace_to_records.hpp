// Turns one OPEN.xtrace trace (a JSON document of either dialect) into
// Kieker-shaped records, so every analysis reads it unchanged:
//   - each SubTrace becomes a trace: a TraceMetadata (hostname from its
//     Location's host, threadId from its root callable) and Before/After
//     events; a SubTrace reached through a RemoteInvocation names the
//     calling trace and the order index of the event before the call as
//     parentTraceId / parentOrderId, as a continued sonde trace does;
//   - nesting callables (MethodInvocation, HTTPRequestProcessing,
//     UseCaseInvocation) become executions; an AfterOperationFailedEvent
//     ends one whose ExceptionThrow callee carries sonde.propagated;
//   - DatabaseInvocation, HTTPRequestProcessing, ExceptionThrow,
//     LoggingInvocation and RemoteInvocation also become callable records
//     (callable_schemas.hpp).
// The whole trace is converted before anything is handed on, so a trace
// with a structural error yields an error naming its JSON path and no
// records at all. Mapping and what is lossy: docs/formats/openxtrace.md.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "format/openxtrace_json.hpp"
#include "format/record.hpp"
#include "format/string_pool.hpp"

namespace sonde::format::openxtrace {

struct PlannedRecord {
  const RecordSchema* schema = nullptr;
  int64_t logging_timestamp = -1;
  std::vector<Value> values;
};

// What the conversion had to make up or leave out, over all traces.
struct ConversionNotes {
  uint64_t sub_traces = 0;
  uint64_t synthetic_executions = 0;  // a sub-trace rooted in a non-nesting callable
  uint64_t synthesized_ids = 0;       // trace / sub-trace ids missing or repeated
  uint64_t dropped_callables = 0;     // unknown classes, children of non-nesting callables
};

class TraceConverter {
 public:
  // Record strings are interned in `pool`, which must outlive their use.
  explicit TraceConverter(StringPool& pool);

  // Converts the trace at JSON path `path` into `out` (cleared first).
  // Returns false with `error` ("<json path>: <reason>") for a trace that
  // does not have OPEN.xtrace's structure or types.
  bool convert(const Json& trace, const std::string& path, std::vector<PlannedRecord>& out,
               std::string* error);

  const ConversionNotes& notes() const { return notes_; }

 private:
  StringPool& pool_;
  ConversionNotes notes_;
  int64_t next_synthetic_id_;
};

}  // namespace sonde::format::openxtrace
