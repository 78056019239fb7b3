#include "analysis/export/otlp_proto.hpp"

#include <map>

#include "analysis/export/protobuf_wire.hpp"

namespace sonde::analysis {
namespace {

using proto::ProtoMessage;

// opentelemetry.proto.* field numbers.
namespace request {
constexpr uint32_t kResourceSpans = 1;
}
namespace resource_spans {
constexpr uint32_t kResource = 1;
constexpr uint32_t kScopeSpans = 2;
}  // namespace resource_spans
namespace resource {
constexpr uint32_t kAttributes = 1;
}
namespace scope_spans {
constexpr uint32_t kScope = 1;
constexpr uint32_t kSpans = 2;
}  // namespace scope_spans
namespace scope {
constexpr uint32_t kName = 1;
constexpr uint32_t kVersion = 2;
}  // namespace scope
namespace span {
constexpr uint32_t kTraceId = 1;
constexpr uint32_t kSpanId = 2;
constexpr uint32_t kParentSpanId = 4;
constexpr uint32_t kName = 5;
constexpr uint32_t kKind = 6;
constexpr uint32_t kStartTimeUnixNano = 7;
constexpr uint32_t kEndTimeUnixNano = 8;
constexpr uint32_t kAttributes = 9;
constexpr uint32_t kStatus = 15;
}  // namespace span
namespace status {
constexpr uint32_t kMessage = 2;
constexpr uint32_t kCode = 3;
constexpr uint64_t kError = 2;
}  // namespace status
namespace key_value {
constexpr uint32_t kKey = 1;
constexpr uint32_t kValue = 2;
}  // namespace key_value
namespace any_value {
constexpr uint32_t kString = 1;
constexpr uint32_t kBool = 2;
constexpr uint32_t kInt = 3;
}  // namespace any_value

// Span and parent ids are 8 bytes, big-endian as their hex form reads.
std::string id_bytes(uint64_t id) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(id >> (56 - 8 * i));
  return out;
}

void add_attribute(ProtoMessage& to, uint32_t field, const OtlpAttribute& a) {
  ProtoMessage value;
  if (const auto* s = std::get_if<std::string>(&a.value)) {
    value.text(any_value::kString, *s);
  } else if (const auto* n = std::get_if<int64_t>(&a.value)) {
    value.sint_as_int(any_value::kInt, *n);
  } else {
    value.boolean(any_value::kBool, std::get<bool>(a.value));
  }
  ProtoMessage kv;
  kv.text(key_value::kKey, a.key);
  kv.message(key_value::kValue, value);
  to.message(field, kv);
}

void add_span(ProtoMessage& to, const OtlpSpan& s) {
  ProtoMessage m;
  m.text(span::kTraceId,
         std::string_view(reinterpret_cast<const char*>(s.trace_id.data()), s.trace_id.size()));
  m.text(span::kSpanId, id_bytes(s.span_id));
  if (s.parent_span_id != 0) m.text(span::kParentSpanId, id_bytes(s.parent_span_id));
  m.text(span::kName, s.name);
  m.uint(span::kKind, static_cast<uint64_t>(s.kind));
  m.fixed64(span::kStartTimeUnixNano, static_cast<uint64_t>(s.start_ns));
  m.fixed64(span::kEndTimeUnixNano, static_cast<uint64_t>(s.end_ns));
  for (const OtlpAttribute& a : s.attributes) add_attribute(m, span::kAttributes, a);
  if (s.error) {
    ProtoMessage st;
    st.text(status::kMessage, s.status_message);
    st.uint(status::kCode, status::kError);
    m.message(span::kStatus, st);
  }
  to.message(scope_spans::kSpans, m);
}

// Reads one varint at `i`; false at a malformed one.
bool read_varint(std::string_view in, size_t& i, uint64_t& v) {
  v = 0;
  for (int shift = 0; i < in.size() && shift < 64; shift += 7) {
    const auto byte = static_cast<uint8_t>(in[i++]);
    v |= uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// Calls `f(field, wire type, varint value, bytes)` per field; false if
// the message is malformed.
template <typename F>
bool for_each_field(std::string_view in, F f) {
  size_t i = 0;
  while (i < in.size()) {
    uint64_t tag = 0, value = 0;
    if (!read_varint(in, i, tag)) return false;
    std::string_view bytes;
    switch (tag & 7) {
      case 0:
        if (!read_varint(in, i, value)) return false;
        break;
      case 1:
        if (in.size() - i < 8) return false;
        i += 8;
        break;
      case 5:
        if (in.size() - i < 4) return false;
        i += 4;
        break;
      case 2:
        if (!read_varint(in, i, value) || value > in.size() - i) return false;
        bytes = in.substr(i, value);
        i += value;
        break;
      default:
        return false;
    }
    f(static_cast<uint32_t>(tag >> 3), static_cast<uint32_t>(tag & 7), value, bytes);
  }
  return true;
}

}  // namespace

std::string encode_otlp_request(const std::vector<OtlpSpan>& spans,
                                const OtlpResourceOptions& options) {
  std::vector<std::string> hosts;
  std::map<std::string, ProtoMessage> per_host;  // the ScopeSpans' spans
  for (const OtlpSpan& s : spans) {
    auto [it, inserted] = per_host.try_emplace(s.host);
    if (inserted) hosts.push_back(s.host);
    add_span(it->second, s);
  }
  ProtoMessage request;
  for (const std::string& host : hosts) {
    ProtoMessage res;
    const std::string service = !options.service_name.empty()
                                    ? options.service_name
                                    : (host.empty() ? "unknown_service" : host);
    add_attribute(res, resource::kAttributes, {"service.name", service});
    if (!host.empty()) add_attribute(res, resource::kAttributes, {"host.name", host});
    ProtoMessage sc;
    sc.text(scope::kName, "sonde");
    if (!options.scope_version.empty()) sc.text(scope::kVersion, options.scope_version);
    ProtoMessage ss;
    ss.message(scope_spans::kScope, sc);
    // The spans already encoded as ScopeSpans.spans fields: append as is.
    std::string scope_spans_bytes = ss.bytes() + per_host[host].bytes();
    ProtoMessage rs;
    rs.message(resource_spans::kResource, res);
    rs.text(resource_spans::kScopeSpans, scope_spans_bytes);
    request.message(request::kResourceSpans, rs);
  }
  return request.bytes();
}

std::optional<OtlpPartialSuccess> decode_otlp_response(std::string_view body) {
  std::optional<OtlpPartialSuccess> result;
  const bool ok =
      for_each_field(body, [&](uint32_t field, uint32_t wire, uint64_t, std::string_view bytes) {
        if (field != 1 || wire != 2) return;  // partial_success = 1
        OtlpPartialSuccess partial;
        for_each_field(bytes, [&](uint32_t f, uint32_t w, uint64_t v, std::string_view b) {
          if (f == 1 && w == 0) partial.rejected_spans = static_cast<int64_t>(v);
          if (f == 2 && w == 2) partial.error_message.assign(b);
        });
        result = partial;
      });
  if (!ok) return std::nullopt;
  return result;
}

}  // namespace sonde::analysis
