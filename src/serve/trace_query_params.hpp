// Turns the query parameters of GET /api/traces into a store::TraceQuery,
// rejecting anything malformed, out of range or unknown.
#pragma once

#include <map>
#include <string>
#include <variant>

#include "store/trace_store.hpp"

namespace sonde::serve {

struct ParamError {
  std::string parameter;
  std::string message;
};

constexpr size_t kMaxTraceLimit = 1000;  // one page of the trace list

std::variant<store::TraceQuery, ParamError> parse_trace_query(
    const std::multimap<std::string, std::string>& params);

// An integer that is the whole text (no sign for unsigned types).
bool parse_int64(const std::string& text, int64_t* out);

}  // namespace sonde::serve
