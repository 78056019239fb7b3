#include "analysis/export/otlp_json_writer.hpp"

#include <algorithm>

#include "analysis/export/export_support.hpp"

namespace sonde::analysis {
namespace {

void string_attribute(std::string& out, const char* key, std::string_view value) {
  out += ",{\"key\":\"";
  out += key;
  out += "\",\"value\":{\"stringValue\":";
  out += json_quote(value);
  out += "}}";
}

// One attribute of a span, in OTLP/JSON (a leading comma).
void attribute_json(std::string& out, const OtlpAttribute& a) {
  out += ",{\"key\":";
  out += json_quote(a.key);
  out += ",\"value\":{";
  if (const auto* s = std::get_if<std::string>(&a.value)) {
    out += "\"stringValue\":" + json_quote(*s);
  } else if (const auto* n = std::get_if<int64_t>(&a.value)) {
    out += "\"intValue\":\"" + std::to_string(*n) + "\"";
  } else {
    out += std::string("\"boolValue\":") + (std::get<bool>(a.value) ? "true" : "false");
  }
  out += "}}";
}

std::string span_json(const OtlpSpan& s) {
  std::string hex_trace;
  for (uint8_t b : s.trace_id) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex_trace += kHex[b >> 4];
    hex_trace += kHex[b & 0xF];
  }
  std::string span = "{\"traceId\":\"" + hex_trace + "\",\"spanId\":\"" + hex16(s.span_id) + "\"";
  if (s.parent_span_id != 0) span += ",\"parentSpanId\":\"" + hex16(s.parent_span_id) + "\"";
  span += ",\"name\":" + json_quote(s.name);
  span += ",\"kind\":" + std::to_string(static_cast<int>(s.kind));
  span += ",\"startTimeUnixNano\":\"" + std::to_string(s.start_ns) + "\"";
  span += ",\"endTimeUnixNano\":\"" + std::to_string(s.end_ns) + "\"";
  span += ",\"attributes\":[";
  std::string attributes;
  for (const OtlpAttribute& a : s.attributes) attribute_json(attributes, a);
  if (!attributes.empty()) span.append(attributes, 1);  // drop the leading comma
  span += "]";
  if (s.error) {
    constexpr int kStatusError = 2;
    span += ",\"status\":{\"code\":" + std::to_string(kStatusError) +
            ",\"message\":" + json_quote(s.status_message) + "}";
  }
  span += "}";
  return span;
}

}  // namespace

OtlpJsonWriter::OtlpJsonWriter(std::ostream& out, OtlpJsonOptions options)
    : out_(out), options_(std::move(options)) {}

void OtlpJsonWriter::on_stitched_trace(const StitchedTrace& stitched) {
  if (stitched.parts.empty()) return;
  ++stats_.traces;
  OtlpSpanOptions span_options;
  span_options.short_labels = options_.short_labels;
  for (const OtlpSpan& span : otlp_spans(stitched, span_options)) {
    if (span.error) ++stats_.failed_spans;
    add_span(span.host, span_json(span));
  }
  ++buffered_traces_;
  if (buffered_traces_ >= options_.max_traces_per_line) flush();
}

std::string OtlpJsonWriter::resource_prefix(const std::string& host) const {
  const std::string service = options_.service_name.empty()
                                  ? (host.empty() ? "unknown_service" : host)
                                  : options_.service_name;
  std::string attributes;
  string_attribute(attributes, "service.name", service);
  if (!host.empty()) string_attribute(attributes, "host.name", host);
  std::string scope = "{\"name\":\"sonde\"";
  if (!options_.scope_version.empty())
    scope += ",\"version\":" + json_quote(options_.scope_version);
  scope += "}";
  return "{\"resource\":{\"attributes\":[" + attributes.substr(1) +
         "]},\"scopeSpans\":[{\"scope\":" + scope + ",\"spans\":[";
}

void OtlpJsonWriter::add_span(const std::string& host, const std::string& span) {
  constexpr size_t kLineFrame = sizeof("{\"resourceSpans\":[]}\n");
  constexpr size_t kResourceEnd = sizeof("]}]},");
  auto it = batch_index_.find(host);
  const size_t growth =
      span.size() + 1 +
      (it == batch_index_.end() ? resource_prefix(host).size() + kResourceEnd : 0);
  if (buffered_spans_ > 0 && kLineFrame + buffered_bytes_ + growth > options_.max_line_bytes) {
    flush();
    it = batch_index_.end();
  }
  if (it == batch_index_.end()) {
    it = batch_index_.emplace(host, batch_.size()).first;
    batch_.push_back(ResourceBatch{resource_prefix(host), {}});
    buffered_bytes_ += batch_.back().prefix.size() + kResourceEnd;
  }
  std::string& spans = batch_[it->second].spans;
  if (!spans.empty()) spans += ',';
  spans += span;
  buffered_bytes_ += span.size() + 1;
  ++buffered_spans_;
  ++stats_.spans;
}

void OtlpJsonWriter::flush() {
  if (buffered_spans_ > 0) {
    out_ << "{\"resourceSpans\":[";
    for (size_t r = 0; r < batch_.size(); ++r) {
      out_ << (r == 0 ? "" : ",") << batch_[r].prefix << batch_[r].spans << "]}]}";
    }
    out_ << "]}\n";
    out_.flush();
    ++stats_.lines;
  }
  batch_.clear();
  batch_index_.clear();
  buffered_traces_ = 0;
  buffered_spans_ = 0;
  buffered_bytes_ = 0;
}

}  // namespace sonde::analysis
