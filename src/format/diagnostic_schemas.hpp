// Records the probes for unmodified programs write besides flow events and
// the callable records (callable_schemas.hpp): lock waits and message sends.
// Schemas: builtin_schemas_diagnostic.cpp; what the diagnosis reads from
// them: docs/diagnose/experiment-data.md; the probes: docs/probes.md.
//
// Like the callable records, each starts with `timestamp` (epoch ns),
// `traceId` and `orderIndex`: the trace the thread was in and the order
// index of that trace's last flow event before the record (both -1 when
// the thread was in no monitored operation). Durations are nanoseconds,
// -1 when unknown.
#pragma once

#include <cstddef>
#include <string_view>

namespace sonde::format {

namespace diagnostic_class {
inline constexpr std::string_view kLockWait = "sonde.record.LockWait";
inline constexpr std::string_view kMessageSend = "sonde.record.MessageSend";
}  // namespace diagnostic_class

// Field indexes, in schema order; 0..2 are callable_field's.
namespace lock_field {
inline constexpr size_t kWaitDuration = 3;  // time blocked acquiring the lock
inline constexpr size_t kHoldDuration = 4;  // -1: not measured
inline constexpr size_t kLock = 5;          // "0x…" address, or a name
inline constexpr size_t kOperation = 6;     // innermost monitored operation of the waiter
}  // namespace lock_field

namespace message_field {
inline constexpr size_t kDuration = 3;
inline constexpr size_t kDestination = 4;  // queue, topic or peer
inline constexpr size_t kBytes = 5;
}  // namespace message_field

}  // namespace sonde::format
