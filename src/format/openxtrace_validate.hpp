// Checks an OPEN.xtrace trace against the meta-model's invariants
// (research seed-003 §8.2), in either JSON dialect:
//   - one root sub-trace, one root callable per sub-trace, sub-trace ids
//     unique in a trace;
//   - DatabaseInvocation, RemoteInvocation, LoggingInvocation and
//     ExceptionThrow nest no callees; HTTPRequestProcessing only as a
//     sub-trace root (a warning: sonde writes it where the request was
//     handled, which may be deeper);
//   - exitTime - timeStamp = responseTime (to the millisecond);
//   - exclusiveTime = responseTime - the callees' responseTimes, for
//     callables and sub-traces; negative is an error, or a warning when a
//     RemoteInvocation is among the callees (asynchronous or skewed);
//   - callees lie within their caller's interval (a warning for
//     RemoteInvocations and their target sub-traces: other clocks, or
//     asynchronous continuations);
//   - exclusiveCPUTime <= CPUTime <= responseTime.
// Values missing by the dialects' conventions (-1, null, "undefined") are
// not checked.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "format/openxtrace_json.hpp"

namespace sonde::format {

enum class IssueSeverity : uint8_t { kError, kWarning };

struct OpenXtraceIssue {
  IssueSeverity severity = IssueSeverity::kError;
  std::string path;  // JSON path of the offending value
  std::string message;
};

std::vector<OpenXtraceIssue> validate_openxtrace_trace(const openxtrace::Json& trace,
                                                       const std::string& path = "");

// Every trace of a document (any layout the reader accepts); malformed
// JSON is one error.
std::vector<OpenXtraceIssue> validate_openxtrace(std::istream& in);

size_t count_errors(const std::vector<OpenXtraceIssue>& issues);

}  // namespace sonde::format
