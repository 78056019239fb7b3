// Reads an OPEN.xtrace JSON file one trace at a time, so that a large file
// never becomes one document in memory: only the trace being converted is.
// Accepted layouts: a JSON array of traces (JsonOPENxtraceSerializer's
// serialize(list), sonde's writer), one trace object, or trace objects one
// after another (the fork's streaming writeTrace, one per line).
//
// Built on nlohmann's SAX parser, which keeps no recursion of its own; the
// per-trace document is assembled here without recursion too, and nesting
// deeper than a limit is rejected, so hostile input cannot exhaust the stack.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <string>

#include "format/openxtrace_json.hpp"

namespace sonde::format::openxtrace {

struct SplitResult {
  bool ok = true;
  std::string error;  // "byte N: reason" when !ok
  uint64_t elements = 0;
  bool stopped = false;  // the callback asked to stop
};

// `on_trace(element, path)` gets each top-level trace value (an array
// element, or a whole top-level object) and its JSON path ("/3", or
// "[object 3]" for concatenated objects); returning false stops reading.
using TraceCallback = std::function<bool(Json&& element, const std::string& path)>;

// The JSON nesting accepted from OPEN.xtrace files: each call level takes
// two (the callable and its "children" array), so this admits traces a
// million calls deep. Parsing, conversion and validation keep their own
// stacks on the heap, so depth costs memory, not native stack.
inline constexpr size_t kMaxOpenXtraceNesting = 2'000'000;

SplitResult split_traces(std::istream& in, size_t max_depth, const TraceCallback& on_trace);

}  // namespace sonde::format::openxtrace
