// The in-memory event written by probes: 16 bytes, two words, no strings.
// Word `b` holds the kind in its top byte and a 56-bit payload (function
// address or operation id); word `a` the timestamp or a second payload.
#pragma once

#include <cstdint>

namespace sonde::monitor {

struct RawEvent {
  uint64_t a;
  uint64_t b;
};
static_assert(sizeof(RawEvent) == 16);

enum class RawKind : uint8_t {
  kNone = 0,
  kEnterFn = 1,      // a: time, payload: function address
  kExitFn = 2,       // a: time, payload: function address
  kEnterOp = 3,      // a: time, payload: manual operation id
  kExitOp = 4,       // a: time, payload: manual operation id
  kFailFn = 5,       // a: time, payload: function address; followed by kCause
  kFailOp = 6,       // a: time, payload: operation id; followed by kCause
  kCause = 7,        // a: cause string id (see cause_registry)
  kTraceBegin = 8,   // a: trace id, payload: 0
  kTraceParent = 9,  // a: parent trace id, payload: parent order index + 1 (0 = none)
  kLost = 10,        // a: time, payload: events dropped just before this point
  // After kTraceBegin/kTraceParent of a trace that continues a W3C trace
  // sonde did not start, three of them: a: the value, payload: which
  // (kW3cTraceHigh, kW3cTraceLow, kW3cParentSpan).
  kW3c = 11,
};

inline constexpr uint64_t kW3cTraceHigh = 0;
inline constexpr uint64_t kW3cTraceLow = 1;
inline constexpr uint64_t kW3cParentSpan = 2;  // 0: the parent is a sonde trace part

inline constexpr int kKindShift = 56;
inline constexpr uint64_t kPayloadMask = (uint64_t{1} << kKindShift) - 1;

constexpr uint64_t pack(RawKind kind, uint64_t payload) {
  return (static_cast<uint64_t>(kind) << kKindShift) | (payload & kPayloadMask);
}
constexpr RawKind kind_of(uint64_t b) { return static_cast<RawKind>(b >> kKindShift); }
constexpr uint64_t payload_of(uint64_t b) { return b & kPayloadMask; }

}  // namespace sonde::monitor
