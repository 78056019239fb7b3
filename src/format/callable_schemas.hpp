// Records for what happens inside an execution besides calls: database
// calls, HTTP request processing, exceptions, log messages and remote calls
// (OPEN.xtrace's DatabaseInvocation, HTTPRequestProcessing, ExceptionThrow,
// LoggingInvocation, RemoteInvocation). Schemas: builtin_schemas_callables.cpp;
// meaning and units: docs/formats/openxtrace.md.
//
// Each record belongs to a trace and a position in it, like a continued
// trace's TraceMetadata: `traceId` plus `orderIndex`, the Kieker order
// index of the last flow event of that trace before the callable (-1: none
// known). The execution it belongs to is the one current at that event
// (analysis/execution_lookup.hpp), and the callable comes after that
// execution's callees whose events precede it. An HttpRequest describes the
// execution whose before event has that order index.
//
// Times are epoch nanoseconds; durations nanoseconds, -1 when unknown.
// Maps (headers, parameters, attributes) are flattened into string arrays
// of alternating keys and values: [k1, v1, k2, v2, ...]; a multi-valued
// parameter repeats its key.
#pragma once

#include <cstddef>
#include <string_view>

namespace sonde::format {

namespace callable_class {
inline constexpr std::string_view kDatabaseCall = "sonde.record.DatabaseCall";
inline constexpr std::string_view kHttpRequest = "sonde.record.HttpRequest";
inline constexpr std::string_view kExceptionThrow = "sonde.record.ExceptionThrow";
inline constexpr std::string_view kLogMessage = "sonde.record.LogMessage";
inline constexpr std::string_view kRemoteCall = "sonde.record.RemoteCall";
}  // namespace callable_class

// Field indexes, in schema order. The first three are shared by all five.
namespace callable_field {
inline constexpr size_t kTimestamp = 0;
inline constexpr size_t kTraceId = 1;
inline constexpr size_t kOrderIndex = 2;
}  // namespace callable_field

namespace db_field {
inline constexpr size_t kDuration = 3;
inline constexpr size_t kSqlStatement = 4;
inline constexpr size_t kPrepared = 5;
inline constexpr size_t kBoundSqlStatement = 6;
inline constexpr size_t kUnboundSqlStatement = 7;
inline constexpr size_t kParameterBindings = 8;  // by position, from 1 in OPEN.xtrace
inline constexpr size_t kDbProductName = 9;
inline constexpr size_t kDbProductVersion = 10;
inline constexpr size_t kDbUrl = 11;
}  // namespace db_field

namespace http_field {
inline constexpr size_t kUri = 3;
inline constexpr size_t kMethod = 4;        // "GET", ...; empty when unknown
inline constexpr size_t kResponseCode = 5;  // -1 when unknown
inline constexpr size_t kRequestHeaders = 6;
inline constexpr size_t kParameters = 7;
inline constexpr size_t kAttributes = 8;
inline constexpr size_t kSessionAttributes = 9;
inline constexpr size_t kResponseHeaders = 10;
inline constexpr size_t kBody = 11;
}  // namespace http_field

namespace exception_field {
inline constexpr size_t kThrowableType = 3;
inline constexpr size_t kErrorMessage = 4;
inline constexpr size_t kCause = 5;
inline constexpr size_t kStackTrace = 6;
// The exception left the execution it belongs to (that execution ended
// with an AfterOperationFailedEvent); false: thrown and caught inside.
inline constexpr size_t kPropagated = 7;
}  // namespace exception_field

namespace log_field {
inline constexpr size_t kLevel = 3;
inline constexpr size_t kMessage = 4;
}  // namespace log_field

namespace remote_field {
inline constexpr size_t kDuration = 3;
inline constexpr size_t kTarget = 4;         // URL or host called
inline constexpr size_t kTargetTraceId = 5;  // trace continuing at the target, -1 if none
}  // namespace remote_field

}  // namespace sonde::format
