#include "analysis/kieker_trace.hpp"

#include <algorithm>
#include <numeric>

namespace sonde::analysis {
namespace {

// Executions in the order they return: post-order of the call tree.
std::vector<size_t> return_order(const Trace& trace) {
  const auto& executions = trace.executions;
  std::vector<size_t> order;
  order.reserve(executions.size());
  std::vector<size_t> open;
  for (size_t i = 0; i < executions.size(); ++i) {
    const int32_t ess = executions[i].ess;
    const size_t depth = ess < 0 ? 0 : static_cast<size_t>(ess);
    while (open.size() > depth) {
      order.push_back(open.back());
      open.pop_back();
    }
    open.push_back(i);
  }
  while (!open.empty()) {
    order.push_back(open.back());
    open.pop_back();
  }
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
  for (size_t i : flow ? return_order(trace) : record_order(trace)) {
    const Execution& e = trace.executions[i];
    out.executions[i].execution = &e;
    out.executions[i].ids = model.add(e.host, e.component, e.operation);
  }
  // Pairs are numbered as calls reach them, i.e. in eoi order.
  for (KiekerExecution& k : out.executions) {
    k.assembly_pair = model.assembly_pair(k.ids.assembly, k.ids.operation);
    k.allocation_pair = model.allocation_pair(k.ids.allocation, k.ids.operation);
    k.assumed = flow && !options.ignore_assumed_calls && k.execution->ess > 0;
    out.max_ess = std::max(out.max_ess, k.execution->ess);
  }
  out.messages = message_sequence(trace);
  return out;
}

}  // namespace sonde::analysis
