#include "diagnose/heuristics/trace_spans.hpp"

#include <algorithm>
#include <string_view>

#include "format/schema.hpp"
#include "format/w3c_ids.hpp"

namespace sonde::diagnose::heuristics {

bool TraceSpanReader::on_record(const format::Record& r) {
  if (r.schema == nullptr) return true;
  const std::string_view cls = r.schema->class_name;
  // Flow records in generic form (a Kieker log), execution records or a
  // trace's W3C context: the reconstructor's business.
  if (cls.starts_with("kieker.common.record.flow.") ||
      cls == format::kieker_class::kOperationExecution || cls == format::w3c::kTraceContextClass)
    return give_up();
  return true;
}

bool TraceSpanReader::on_trace_start(const format::TypedTraceStart& start) {
  if (!seen_.insert(start.trace_id).second || open_.size() >= kMaxOpen) return give_up();
  Open& o = open_[start.trace_id];
  o.span.trace_id = start.trace_id;
  o.span.thread_id = start.thread_id;
  o.span.parent_trace_id = start.parent_trace_id;
  o.span.start = INT64_MAX;
  o.span.end = INT64_MIN;
  return true;
}

bool TraceSpanReader::on_operation_event(const format::TypedOperationEvent& event) {
  auto it = open_.find(event.trace_id);
  if (it == open_.end() || event.order_index != it->second.next_order_index) return give_up();
  Open& o = it->second;
  ++o.next_order_index;
  if (event.kind == format::TypedFlowKind::kBefore) {
    o.stack.push_back(event.operation);
    o.span.start = std::min(o.span.start, event.timestamp);
    ++o.span.executions;
    return true;
  }
  if (o.stack.empty() || o.stack.back() != event.operation) return give_up();
  o.stack.pop_back();
  o.span.end = std::max(o.span.end, event.timestamp);
  if (o.stack.empty()) {
    keep_(o.span);
    open_.erase(it);
  }
  return true;
}

}  // namespace sonde::diagnose::heuristics
