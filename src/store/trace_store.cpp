#include "store/trace_store.hpp"

namespace sonde::store {

StoredTrace to_stored(const analysis::Trace& trace) {
  StoredTrace out;
  auto& e = out.entry;
  e.trace_id = trace.trace_id;
  e.root_operation = std::string(analysis::root_operation(trace));
  e.host = std::string(trace.host);
  e.thread_id = trace.thread_id;
  e.parent_trace_id = trace.parent_trace_id;
  e.start = trace.start_time();
  e.duration = trace.duration();
  e.executions = static_cast<uint32_t>(trace.executions.size());
  out.executions.reserve(trace.executions.size());
  for (const auto& x : trace.executions) {
    if (x.failed) ++e.failed;
    out.executions.push_back({std::string(x.operation), std::string(x.component),
                              std::string(x.host), x.tin, x.tout, x.eoi, x.ess, x.failed,
                              std::string(x.cause)});
  }
  return out;
}

ReducedQueryResult TraceStore::find_reduced(const ReducedQuery&) {
  ReducedQueryResult r;
  r.supported = false;
  return r;
}

ReducedTraceLookup TraceStore::reduced_trace(int64_t) {
  ReducedTraceLookup r;
  r.supported = false;
  return r;
}

}  // namespace sonde::store
