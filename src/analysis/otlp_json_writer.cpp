#include "analysis/otlp_json_writer.hpp"

#include <algorithm>

#include "analysis/call_tree.hpp"
#include "analysis/export_support.hpp"
#include "analysis/operation_signature.hpp"

namespace sonde::analysis {
namespace {

constexpr int kSpanKindInternal = 1;
constexpr int kSpanKindServer = 2;
constexpr int kSpanKindClient = 3;
constexpr int kStatusError = 2;

// SplitMix64's finalizer: a bijective 64-bit mix with good avalanche.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

std::string unix_nanos(int64_t ns) { return std::to_string(std::max<int64_t>(ns, 0)); }

void string_attribute(std::string& out, const char* key, std::string_view value) {
  out += ",{\"key\":\"";
  out += key;
  out += "\",\"value\":{\"stringValue\":";
  out += json_quote(value);
  out += "}}";
}

void int_attribute(std::string& out, const char* key, int64_t value) {
  out += ",{\"key\":\"";
  out += key;
  out += "\",\"value\":{\"intValue\":\"";
  out += std::to_string(value);
  out += "\"}}";
}

// "a.b.Catalog.getBook" / "ns::Tpl<int>::name": the signature from the class
// to the operation name, without modifiers, return type and parameters.
std::string_view qualified_function(std::string_view signature) {
  const SignatureParts parts = split_operation_signature(signature);
  if (parts.qualified_class.empty()) return parts.name;
  const char* begin = parts.qualified_class.data();
  const char* end = parts.name.data() + parts.name.size();
  return end > begin ? std::string_view(begin, static_cast<size_t>(end - begin)) : parts.name;
}

std::string_view host_of(const Execution& e, const Trace& t) {
  return e.host.empty() ? t.host : e.host;
}

}  // namespace

std::string hex16(uint64_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<size_t>(i)] = kHex[value & 0xF];
  return out;
}

int64_t otlp_trace_owner(const StitchedTrace& trace) {
  if (trace.parts.empty()) return 0;
  const Trace& root = trace.parts.front().trace;
  const bool unseen_parent = root.parent_trace_id >= 0 && root.parent_trace_id != root.trace_id;
  return unseen_parent ? root.parent_trace_id : root.trace_id;
}

std::string otlp_trace_id(int64_t owner) {
  return hex16(owner == 0 ? 1 : 0) + hex16(static_cast<uint64_t>(owner));
}

uint64_t otlp_span_id(int64_t owner, int64_t part_trace_id, int32_t eoi) {
  if (part_trace_id == owner) return static_cast<uint64_t>(eoi) + 1;
  const uint64_t h = mix64(static_cast<uint64_t>(part_trace_id) ^
                           mix64(static_cast<uint64_t>(static_cast<uint32_t>(eoi)) + 1));
  return h | (uint64_t{1} << 63);
}

OtlpJsonWriter::OtlpJsonWriter(std::ostream& out, OtlpJsonOptions options)
    : out_(out), options_(std::move(options)) {}

void OtlpJsonWriter::on_stitched_trace(const StitchedTrace& stitched) {
  if (stitched.parts.empty()) return;
  ++stats_.traces;
  const int64_t owner = otlp_trace_owner(stitched);
  const std::string trace_id = otlp_trace_id(owner);
  const Trace& root = stitched.parts.front().trace;

  // Spans that get kind CLIENT: parent executions of parts on another host.
  std::vector<std::vector<bool>> is_client(stitched.parts.size());
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    is_client[p].assign(stitched.parts[p].trace.executions.size(), false);
  }
  // Per part: the span id of its caller (empty: none) and whether it is remote.
  std::vector<std::string> caller_span(stitched.parts.size());
  std::vector<bool> remote_caller(stitched.parts.size(), false);
  if (owner != root.trace_id && root.parent_order_id >= 0) {
    caller_span[0] = hex16(static_cast<uint64_t>(root.parent_order_id) + 1);
    remote_caller[0] = true;
  }
  for (size_t p = 1; p < stitched.parts.size(); ++p) {
    const SubTrace& part = stitched.parts[p];
    if (part.parent < 0 || static_cast<size_t>(part.parent) >= p || part.parent_execution < 0) {
      continue;
    }
    const Trace& parent = stitched.parts[part.parent].trace;
    if (static_cast<size_t>(part.parent_execution) >= parent.executions.size()) continue;
    const Execution& caller = parent.executions[part.parent_execution];
    caller_span[p] = hex16(otlp_span_id(owner, parent.trace_id, caller.eoi));
    if (!part.trace.executions.empty() &&
        host_of(caller, parent) != host_of(part.trace.executions.front(), part.trace)) {
      remote_caller[p] = true;
      is_client[part.parent][part.parent_execution] = true;
    }
  }

  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const Trace& trace = stitched.parts[p].trace;
    const CallTree tree = build_call_tree(trace);
    for (size_t i = 0; i < trace.executions.size(); ++i) {
      const Execution& e = trace.executions[i];
      const int32_t parent = tree.parent[i];
      std::string span = "{\"traceId\":\"" + trace_id + "\",\"spanId\":\"" +
                         hex16(otlp_span_id(owner, trace.trace_id, e.eoi)) + "\"";
      const std::string parent_span =
          parent >= 0 ? hex16(otlp_span_id(owner, trace.trace_id, trace.executions[parent].eoi))
                      : caller_span[p];
      if (!parent_span.empty()) span += ",\"parentSpanId\":\"" + parent_span + "\"";
      int kind = kSpanKindInternal;
      if (is_client[p][i]) kind = kSpanKindClient;
      if (parent < 0 && remote_caller[p]) kind = kSpanKindServer;
      span += ",\"name\":" + json_quote(execution_label(e, options_.short_labels));
      span += ",\"kind\":" + std::to_string(kind);
      span += ",\"startTimeUnixNano\":\"" + unix_nanos(e.tin) + "\"";
      span += ",\"endTimeUnixNano\":\"" + unix_nanos(std::max(e.tout, e.tin)) + "\"";
      span += ",\"attributes\":[";
      std::string attributes;
      string_attribute(attributes, "code.function.name", qualified_function(e.operation));
      string_attribute(attributes, "sonde.operation", e.operation);
      if (!e.component.empty()) string_attribute(attributes, "sonde.component", e.component);
      int_attribute(attributes, "sonde.trace_id", trace.trace_id);
      int_attribute(attributes, "sonde.eoi", e.eoi);
      int_attribute(attributes, "sonde.ess", e.ess);
      if (trace.thread_id >= 0) int_attribute(attributes, "thread.id", trace.thread_id);
      if (!trace.session.empty()) string_attribute(attributes, "sonde.session", trace.session);
      if (e.repaired) attributes += ",{\"key\":\"sonde.repaired\",\"value\":{\"boolValue\":true}}";
      span.append(attributes, 1);  // drop the leading comma
      span += "]";
      if (e.failed) {
        span += ",\"status\":{\"code\":" + std::to_string(kStatusError) +
                ",\"message\":" + json_quote(e.cause) + "}";
        ++stats_.failed_spans;
      }
      span += "}";

      add_span(std::string(host_of(e, trace)), span);
    }
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
