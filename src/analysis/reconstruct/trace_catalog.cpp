#include "analysis/reconstruct/trace_catalog.hpp"

#include <algorithm>
#include <tuple>

namespace sonde::analysis {

std::string_view root_operation(const Trace& trace) {
  return trace.executions.empty() ? std::string_view() : trace.executions.front().operation;
}

TraceCatalog::TraceCatalog(TraceFilter filter, TraceOrder order, size_t limit)
    : filter_(std::move(filter)), order_(order), limit_(limit) {}

bool TraceCatalog::ranks_before(const TraceEntry& a, const TraceEntry& b) const {
  // Ties broken by trace id so the output does not depend on arrival order.
  if (order_ == TraceOrder::kLongest) {
    return std::tie(b.duration, a.trace_id) < std::tie(a.duration, b.trace_id);
  }
  return std::tie(a.start, a.trace_id) < std::tie(b.start, b.trace_id);
}

void TraceCatalog::on_trace(const Trace& trace) {
  if (filter_.only_invalid) return;
  offer(trace, true, {});
}

void TraceCatalog::on_invalid_trace(const InvalidTrace& trace) {
  if (!filter_.include_invalid && !filter_.only_invalid) return;
  Trace partial = trace.partial;
  partial.trace_id = trace.trace_id;
  offer(partial, false,
        trace.problems.empty() ? std::string(to_string(trace.closed_by))
                               : std::string(to_string(trace.problems.front().kind)) + ": " +
                                     trace.problems.front().detail);
}

void TraceCatalog::offer(const Trace& trace, bool valid, const std::string& problem) {
  const std::string_view root = root_operation(trace);
  if (!filter_.operation.empty() && root.find(filter_.operation) == std::string_view::npos) return;
  if (!filter_.host.empty() && trace.host != filter_.host) return;
  // An invalid trace may have executions without an exit (tout == -1).
  int64_t start = 0, end = 0;
  uint32_t failed = 0;
  bool first = true;
  for (const Execution& e : trace.executions) {
    if (e.failed) ++failed;
    if (first || e.tin < start) start = e.tin;
    if (first || std::max(e.tin, e.tout) > end) end = std::max(e.tin, e.tout);
    first = false;
  }
  const int64_t duration = end - start;
  if (duration < filter_.min_duration) return;
  if (filter_.max_duration >= 0 && duration > filter_.max_duration) return;
  if (filter_.only_failed && failed == 0) return;
  ++matched_;
  if (limit_ == 0) return;

  TraceEntry candidate;
  candidate.trace_id = trace.trace_id;
  candidate.start = start;
  candidate.duration = duration;
  // Cheap rejection before copying strings: the heap's top is the worst kept.
  auto worse_first = [this](const TraceEntry& a, const TraceEntry& b) {
    return ranks_before(a, b);
  };
  if (heap_.size() == limit_ && !ranks_before(candidate, heap_.front())) return;
  candidate.root_operation = std::string(root);
  candidate.host = std::string(trace.host);
  candidate.thread_id = trace.thread_id;
  candidate.parent_trace_id = trace.parent_trace_id;
  candidate.executions = static_cast<uint32_t>(trace.executions.size());
  candidate.failed = failed;
  candidate.valid = valid;
  candidate.problem = problem;
  if (heap_.size() == limit_) {
    std::pop_heap(heap_.begin(), heap_.end(), worse_first);
    heap_.back() = std::move(candidate);
  } else {
    heap_.push_back(std::move(candidate));
  }
  std::push_heap(heap_.begin(), heap_.end(), worse_first);
}

std::vector<TraceEntry> TraceCatalog::entries() const {
  std::vector<TraceEntry> out = heap_;
  std::sort(out.begin(), out.end(),
            [this](const TraceEntry& a, const TraceEntry& b) { return ranks_before(a, b); });
  return out;
}

}  // namespace sonde::analysis
