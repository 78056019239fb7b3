#include "analysis/kieker/kieker_trace.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>

namespace sonde::analysis {
namespace {

// Executions in the order Kieker's filter finishes them: by the event that
// closed them; of those one event closes, first the calls known only from
// call events (Kieker's closeOpenCalls: outermost first), then the rest
// innermost first (the before event the after event closes, or what repair
// closed together). Without call events that is the order they return in.
// The end of the trace (no closing event) comes last.
std::vector<size_t> close_order(const Trace& trace) {
  const auto& xs = trace.executions;
  std::vector<size_t> order(xs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto key = [&](size_t i) {
    const Execution& x = xs[i];
    const int32_t closed_by = x.exit_order_index >= 0 ? x.exit_order_index : INT32_MAX;
    return std::make_tuple(closed_by, x.call_only ? 0 : 1, x.call_only ? x.eoi : -x.eoi);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

// OperationExecutionRecords are written when executions end: by tout.
std::vector<size_t> record_order(const Trace& trace) {
  std::vector<size_t> order(trace.executions.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return trace.executions[a].tout < trace.executions[b].tout;
  });
  return order;
}

}  // namespace

KiekerTrace resolve_kieker_trace(const Trace& trace, KiekerSystemModel& model,
                                 const KiekerTraceOptions& options) {
  KiekerTrace out;
  out.trace = &trace;
  out.executions.resize(trace.executions.size());
  const bool flow = trace.origin == TraceOrigin::kFlowEvents;
  for (size_t i : flow ? close_order(trace) : record_order(trace)) {
    const Execution& e = trace.executions[i];
    out.executions[i].execution = &e;
    out.executions[i].ids = model.add(e.host, e.component, e.operation);
  }
  // Pairs are numbered as calls reach them, i.e. in eoi order.
  for (KiekerExecution& k : out.executions) {
    k.assembly_pair = model.assembly_pair(k.ids.assembly, k.ids.operation);
    k.allocation_pair = model.allocation_pair(k.ids.allocation, k.ids.operation);
    k.assumed = flow && !options.ignore_assumed_calls && k.execution->assumed;
    out.max_ess = std::max(out.max_ess, k.execution->ess);
  }
  out.messages = message_sequence(trace);
  return out;
}

}  // namespace sonde::analysis
