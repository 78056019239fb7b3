#include "analysis/model/trace_start_order.hpp"

#include <algorithm>

namespace sonde::analysis {
namespace {

// Heap order: the root is the earliest-starting trace.
struct StartsLater {
  bool operator()(const Trace& a, const Trace& b) const {
    const int64_t ta = a.executions.empty() ? 0 : a.executions.front().tin;
    const int64_t tb = b.executions.empty() ? 0 : b.executions.front().tin;
    return ta != tb ? ta > tb : a.trace_id > b.trace_id;
  }
};

}  // namespace

TraceStartOrder::TraceStartOrder(TraceSink& next, size_t window, size_t max_executions)
    : next_(next), window_(window), max_executions_(max_executions) {}

TraceStartOrder::Key TraceStartOrder::key_of(const Trace& trace) {
  // Kieker orders by the tin of the trace's first execution in eoi order.
  return {trace.executions.empty() ? 0 : trace.executions.front().tin, trace.trace_id};
}

void TraceStartOrder::release_first() {
  std::pop_heap(held_.begin(), held_.end(), StartsLater());
  const Trace first = std::move(held_.back());
  held_.pop_back();
  held_executions_ -= first.executions.size();
  released_any_ = true;
  last_released_ = key_of(first);
  next_.on_trace(first);
}

void TraceStartOrder::on_trace(const Trace& trace) {
  if (window_ == 0 || trace.origin != TraceOrigin::kExecutionRecords) {
    next_.on_trace(trace);
    return;
  }
  if (released_any_ && key_of(trace) < last_released_) ++late_;
  held_.push_back(trace);
  held_executions_ += trace.executions.size();
  std::push_heap(held_.begin(), held_.end(), StartsLater());
  while (held_.size() > window_ || (held_executions_ > max_executions_ && held_.size() > 1)) {
    release_first();
  }
}

void TraceStartOrder::flush() {
  while (!held_.empty()) release_first();
}

}  // namespace sonde::analysis
