#include "analysis/model/execution_lookup.hpp"

#include <algorithm>

namespace sonde::analysis {

ExecutionLookup::ExecutionLookup(const Trace& trace) : trace_(trace) {
  const std::vector<Execution>& xs = trace.executions;
  parents_.assign(xs.size(), -1);
  // In eoi order the caller of an execution is the latest one before it
  // with a stack depth one smaller: keep the latest execution per depth.
  std::vector<int32_t> latest_at_depth;
  bool ordered = !xs.empty();
  for (size_t i = 0; i < xs.size(); ++i) {
    const Execution& x = xs[i];
    if (x.ess > 0 && static_cast<size_t>(x.ess) <= latest_at_depth.size()) {
      parents_[i] = latest_at_depth[static_cast<size_t>(x.ess) - 1];
    }
    if (x.ess >= 0) {
      latest_at_depth.resize(static_cast<size_t>(x.ess) + 1);
      latest_at_depth[static_cast<size_t>(x.ess)] = static_cast<int32_t>(i);
    }
    if (x.order_index < 0 || (i > 0 && x.order_index <= xs[i - 1].order_index)) ordered = false;
  }
  has_order_indexes_ = ordered;
}

int32_t ExecutionLookup::current_at_order_index(int32_t order_index) const {
  if (!has_order_indexes_ || order_index < 0) return -1;
  const std::vector<Execution>& xs = trace_.executions;
  // The last execution opened at or before the event...
  auto it = std::upper_bound(xs.begin(), xs.end(), order_index,
                             [](int32_t k, const Execution& x) { return k < x.order_index; });
  if (it == xs.begin()) return -1;
  int32_t i = static_cast<int32_t>(it - xs.begin()) - 1;
  // ...or the nearest caller still open then. An exit order index of -1
  // means the exit was never seen: open until the end.
  while (i >= 0) {
    const Execution& x = xs[static_cast<size_t>(i)];
    if (x.exit_order_index < 0 || x.exit_order_index > order_index) break;
    i = parents_[static_cast<size_t>(i)];
  }
  return i;  // -1 when even the entry had returned: an index past the trace
}

int32_t ExecutionLookup::innermost_at_time(int64_t time) const {
  const std::vector<Execution>& xs = trace_.executions;
  if (xs.empty()) return -1;
  int32_t best = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Execution& x = xs[i];
    if (x.tin <= time && (x.tout < 0 || time <= x.tout) && x.ess >= xs[best].ess) {
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

}  // namespace sonde::analysis
