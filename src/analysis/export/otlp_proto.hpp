// OTLP spans as protobuf: an ExportTraceServiceRequest, the body of an
// OTLP/HTTP `POST /v1/traces` (Content-Type application/x-protobuf), and
// the reading of the collector's ExportTraceServiceResponse. Field numbers
// are OpenTelemetry's (opentelemetry-proto, trace/v1 and collector/trace/v1);
// docs/collect.md lists the subset written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/export/otlp_spans.hpp"

namespace sonde::analysis {

struct OtlpResourceOptions {
  // service.name of every resource; empty: the span's host (each host is a
  // service, as Kieker's deployment view has it).
  std::string service_name;
  std::string scope_version;  // InstrumentationScope "sonde"'s version, omitted when empty
};

// One ResourceSpans per host, in order of first appearance; spans in the
// order given.
std::string encode_otlp_request(const std::vector<OtlpSpan>& spans,
                                const OtlpResourceOptions& options = {});

struct OtlpPartialSuccess {
  int64_t rejected_spans = 0;
  std::string error_message;
};
// The response body of a successful export: its partial_success, if any
// (nothing when the body is empty or has none; an undecodable body too).
std::optional<OtlpPartialSuccess> decode_otlp_response(std::string_view body);

}  // namespace sonde::analysis
