#include "analysis/export/otlp_spans.hpp"

#include <algorithm>

#include "analysis/export/export_support.hpp"
#include "analysis/model/call_tree.hpp"
#include "analysis/model/operation_signature.hpp"

namespace sonde::analysis {
namespace {

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

std::array<uint8_t, 16> trace_id_bytes(const StitchedTrace& stitched, int64_t owner) {
  std::array<uint8_t, 16> id{};
  const format::w3c::Context& w3c = stitched.parts.front().trace.w3c;
  const uint64_t high = w3c.present() ? w3c.trace_id_high : owner == 0 ? 1 : 0;
  const uint64_t low = w3c.present() ? w3c.trace_id_low : static_cast<uint64_t>(owner);
  for (int i = 0; i < 8; ++i) {
    id[static_cast<size_t>(i)] = static_cast<uint8_t>(high >> (56 - 8 * i));
    id[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(low >> (56 - 8 * i));
  }
  return id;
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

uint64_t otlp_span_id(bool owner_part, int64_t part_trace_id, const Execution& e) {
  // The enter event's order index; OperationExecutionRecords have none, their eoi stands in.
  const int32_t position = e.order_index >= 0 ? e.order_index : e.eoi;
  return format::w3c::span_id(owner_part, static_cast<uint64_t>(part_trace_id),
                              static_cast<uint32_t>(position));
}

std::vector<OtlpSpan> otlp_spans(const StitchedTrace& stitched, const OtlpSpanOptions& options) {
  std::vector<OtlpSpan> spans;
  if (stitched.parts.empty()) return spans;
  const int64_t owner = otlp_trace_owner(stitched);
  const std::array<uint8_t, 16> trace_id = trace_id_bytes(stitched, owner);
  const Trace& root = stitched.parts.front().trace;
  // A trace sonde did not start has no owner part: every part continued it.
  const auto owner_part = [&](const Trace& t) {
    return t.trace_id == owner && !root.w3c.present();
  };

  // Spans that get kind CLIENT: parent executions of parts on another host.
  std::vector<std::vector<bool>> is_client(stitched.parts.size());
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    is_client[p].assign(stitched.parts[p].trace.executions.size(), false);
  }
  // Per part: the span of its caller (0: none) and whether it is remote;
  // and, for request-level export, the caller's nearest kept span.
  std::vector<uint64_t> caller_span(stitched.parts.size(), 0);
  std::vector<bool> remote_caller(stitched.parts.size(), false);
  std::vector<std::vector<uint64_t>> kept_ancestor(stitched.parts.size());
  if (root.w3c.present()) {
    // The caller's span as recorded: a foreign caller's, or that of the
    // sonde execution that handed the context on (0: unknown, no parent).
    caller_span[0] = root.w3c.parent_span_id;
    remote_caller[0] = root.w3c.parent_span_id != 0 && root.parent_order_id < 0;
  } else if (owner != root.trace_id && root.parent_order_id >= 0) {
    // sonde's traceparent from a part not in this log: its parent-id is
    // the caller's enter order index + 1, that execution's span id.
    caller_span[0] = static_cast<uint64_t>(root.parent_order_id) + 1;
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
    caller_span[p] = otlp_span_id(owner_part(parent), parent.trace_id, caller);
    if (!part.trace.executions.empty() &&
        host_of(caller, parent) != host_of(part.trace.executions.front(), part.trace)) {
      remote_caller[p] = true;
      is_client[part.parent][part.parent_execution] = true;
    }
  }

  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const Trace& trace = stitched.parts[p].trace;
    const CallTree tree = build_call_tree(trace);
    // The span a kept execution hangs from: its parent's, or the parent's
    // nearest kept ancestor's when the parent is not exported.
    std::vector<uint64_t>& kept_above = kept_ancestor[p];
    kept_above.assign(trace.executions.size(), 0);
    if (options.roots_only && p > 0) {
      // The caller itself if it was kept, else the span it hangs from.
      const SubTrace& part = stitched.parts[p];
      if (part.parent >= 0 && static_cast<size_t>(part.parent) < p && part.parent_execution >= 0 &&
          static_cast<size_t>(part.parent_execution) < kept_ancestor[part.parent].size()) {
        caller_span[p] = kept_ancestor[part.parent][part.parent_execution];
      }
    }
    for (size_t i = 0; i < trace.executions.size(); ++i) {
      const Execution& e = trace.executions[i];
      const int32_t parent = tree.parent[i];
      const bool own = owner_part(trace);
      const uint64_t id = otlp_span_id(own, trace.trace_id, e);
      const uint64_t natural_parent =
          parent >= 0 ? otlp_span_id(own, trace.trace_id, trace.executions[parent])
                      : caller_span[p];
      const bool keep = !options.roots_only || parent < 0 ||
                        (options.min_duration_ns > 0 && e.duration() >= options.min_duration_ns);
      // What this execution's descendants hang from if they are kept.
      const uint64_t hang_from =
          parent < 0
              ? caller_span[p]
              : (options.roots_only ? kept_above[static_cast<size_t>(parent)] : natural_parent);
      if (options.roots_only) {
        kept_above[i] = keep ? id : hang_from;
        if (parent >= 0 && !keep) continue;
      }
      OtlpSpan span;
      span.trace_id = trace_id;
      span.span_id = id;
      span.parent_span_id = options.roots_only ? hang_from : natural_parent;
      span.kind = OtlpSpanKind::kInternal;
      if (is_client[p][i]) span.kind = OtlpSpanKind::kClient;
      if (parent < 0 && remote_caller[p]) span.kind = OtlpSpanKind::kServer;
      span.name = execution_label(e, options.short_labels);
      span.start_ns = std::max<int64_t>(e.tin, 0);
      span.end_ns = std::max<int64_t>(std::max(e.tout, e.tin), 0);
      auto& a = span.attributes;
      a.push_back({"code.function.name", std::string(qualified_function(e.operation))});
      a.push_back({"sonde.operation", std::string(e.operation)});
      if (!e.component.empty()) a.push_back({"sonde.component", std::string(e.component)});
      a.push_back({"sonde.trace_id", int64_t{trace.trace_id}});
      a.push_back({"sonde.eoi", int64_t{e.eoi}});
      a.push_back({"sonde.ess", int64_t{e.ess}});
      if (trace.thread_id >= 0) a.push_back({"thread.id", int64_t{trace.thread_id}});
      if (!trace.session.empty()) a.push_back({"sonde.session", std::string(trace.session)});
      if (e.repaired) a.push_back({"sonde.repaired", true});
      if (e.failed) {
        span.error = true;
        span.status_message = std::string(e.cause);
      }
      span.host = std::string(host_of(e, trace));
      spans.push_back(std::move(span));
    }
  }
  return spans;
}

}  // namespace sonde::analysis
