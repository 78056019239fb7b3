// The W3C span ids sonde hands out and exports (docs/analysis/exports.md,
// "Ids"). Here, in the format layer, because two layers compute them and
// must agree bit for bit: libsonde, when a program captures a context and
// injects it into a traceparent header (the header's parent-id), and the
// OTLP export, which gives the execution running at that moment the same
// id, so that the callee's spans hang from a span that exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "format/context_key.hpp"

namespace sonde::format::w3c {

// What a trace part that continued a W3C trace sonde did not start keeps of
// it: the trace id whole, and the caller's span id (0 when the caller is a
// sonde trace part, whose span follows from where the part continued it).
struct Context {
  uint64_t trace_id_high = 0;
  uint64_t trace_id_low = 0;
  uint64_t parent_span_id = 0;
  bool present() const { return (trace_id_high | trace_id_low) != 0; }
  bool operator==(const Context&) const = default;
};

// The record a Kieker-style record stream carries it in, right after the
// trace's TraceMetadata: traceId, then the three fields above as int64
// (their bits). Not written into Kieker logs: Kieker's tools do not know it.
inline constexpr std::string_view kTraceContextClass = "sonde.record.TraceContext";
namespace trace_context_field {
inline constexpr size_t kTraceId = 0;
inline constexpr size_t kTraceIdHigh = 1;
inline constexpr size_t kTraceIdLow = 2;
inline constexpr size_t kParentSpanId = 3;
}  // namespace trace_context_field

// The span id of an execution, from where its enter event sits in its
// trace part: its order index (Kieker's, counting enter and exit events).
//   - A part that began a trace of its own (the trace's owner): the order
//     index + 1, small, readable and never 0.
//   - A part that continued a context (another thread's, another
//     process's, a foreign traceparent): a mix of (the part's trace id, the
//     order index) with the top bit set, which no owner's id can equal.
inline uint64_t span_id(bool owner_part, uint64_t part_trace_id, uint32_t enter_order) {
  if (owner_part) return uint64_t{enter_order} + 1;
  return context_key::combine(part_trace_id, uint64_t{enter_order} + 1) | (uint64_t{1} << 63);
}

// A traceparent whose trace id has a zero high half and whose parent-id
// fits an order index (at most 2^31) is sonde's own form (sonde wrote it
// for a trace it started); any other is a trace sonde did not start, and
// sonde keeps its id whole.
inline bool is_sonde_form(uint64_t trace_id_high, uint64_t parent_id) {
  return trace_id_high == 0 && parent_id != 0 && parent_id <= 0x80000000ULL;
}

}  // namespace sonde::format::w3c
