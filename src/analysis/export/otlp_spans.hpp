// Stitched traces as OpenTelemetry spans, independent of the encoding: the
// OTLP/JSON file writer (otlp_json_writer.hpp) and the OTLP/HTTP protobuf
// exporter (otlp_proto.hpp, collect/otlp_forwarder.hpp) both start here.
//
// Ids (see docs/analysis/exports.md):
//   traceId = a trace sonde did not start (its root part continued a
//             foreign traceparent): that W3C trace id, whole. Otherwise 16
//             zero hex digits + the 16-hex sonde trace id of the trace's
//             owner: the root part's trace id, or, if the root continued a
//             parent that is not in this log (a traceparent from another
//             process), that parent's trace id. Either is the W3C trace-id
//             sonde_context_inject writes, so spans of an OpenTelemetry
//             service called from the trace land in the same trace.
//   spanId  = format::w3c::span_id of the execution's enter order index:
//             the parent-id sonde_context_inject writes while it runs, so
//             such a service's root span finds its parent.
// A continued part's first spans have parentSpanId = the span of the
// execution that handed the context on; a root that continued a foreign
// traceparent, the caller's span id it carried.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analysis/model/stitched_trace.hpp"

namespace sonde::analysis {

enum class OtlpSpanKind : int { kInternal = 1, kServer = 2, kClient = 3 };

struct OtlpAttribute {
  std::string key;
  std::variant<std::string, int64_t, bool> value;
};

struct OtlpSpan {
  std::array<uint8_t, 16> trace_id{};
  uint64_t span_id = 0;
  uint64_t parent_span_id = 0;  // 0: none
  std::string name;
  OtlpSpanKind kind = OtlpSpanKind::kInternal;
  int64_t start_ns = 0;  // Unix epoch nanoseconds; never negative
  int64_t end_ns = 0;    // >= start_ns
  std::vector<OtlpAttribute> attributes;
  bool error = false;          // status ERROR
  std::string status_message;  // the failure cause when `error`
  std::string host;            // the resource it belongs to
};

struct OtlpSpanOptions {
  // Span names: "Catalog.getBook(..)" (short) or the full signature. The
  // full signature is always in the attribute sonde.operation.
  bool short_labels = true;
  // Request-level export (a span per function call would flood a backend):
  // only each part's root executions, and any execution lasting at least
  // `min_duration_ns` (0: none). A kept span's parent is its nearest kept
  // ancestor. False: every execution.
  bool roots_only = false;
  int64_t min_duration_ns = 0;
};

// The spans of `trace` in part order, then eoi order.
std::vector<OtlpSpan> otlp_spans(const StitchedTrace& trace, const OtlpSpanOptions& options = {});

// The pieces, for the encoders and their tests.
std::string hex16(uint64_t value);
int64_t otlp_trace_owner(const StitchedTrace& trace);
std::string otlp_trace_id(int64_t owner);  // 32 hex digits, for a trace sonde started
// `owner_part`: the part is the trace's owner (it began a trace of its own).
uint64_t otlp_span_id(bool owner_part, int64_t part_trace_id, const Execution& e);

}  // namespace sonde::analysis
