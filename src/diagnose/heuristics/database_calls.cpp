#include "diagnose/heuristics/database_calls.hpp"

#include <algorithm>

#include "diagnose/heuristics/experiment_cache.hpp"
#include "diagnose/heuristics/request_services.hpp"

namespace sonde::diagnose::heuristics {

bool database_in_process(const Experiment& e, const LogRecords& calls) {
  if (e.samplers.is_object() && e.samplers.contains("postgresql")) return false;
  for (const LogRecord& r : calls.records) {
    if (r.text("dbProductName") == "PostgreSQL") return false;
    if (r.text("dbUrl").rfind("postgresql://", 0) == 0) return false;
  }
  return true;
}

const DatabaseCallTime& database_call_time(const Experiment& e) {
  return per_experiment<DatabaseCallTime>(e, [&e] {
    DatabaseCallTime out;
    const LogRecords& calls = log_records(e, "sonde.record.DatabaseCall");
    const RequestServices& services = request_services(e);
    if (!calls.error.empty()) {
      out.error = calls.error;
    } else if (!services.error.empty()) {
      out.error = services.error;
    } else {
      out.total_requests = services.requests;
      // One entry per attributed request, in request order.
      std::map<size_t, size_t> entry_of_request;
      for (const auto& [trace, request] : services.request_of_trace) {
        if (entry_of_request.count(request)) continue;
        entry_of_request[request] = out.requests.size();
        const Request& r = e.requests.at(request);
        out.requests.push_back({r.service, r.response_ms(), 0, 0});
      }
      for (const LogRecord& c : calls.records) {
        const double ms = std::max(0.0, c.number("duration")) / 1e6;
        out.all_calls_ms += ms;
        auto request = services.request_of_trace.find(c.trace_id);
        if (request == services.request_of_trace.end()) {
          out.unattributed_ms += ms;
          continue;
        }
        RequestDatabaseTime& t = out.requests[entry_of_request.at(request->second)];
        t.database_ms += ms;
        ++t.calls;
      }
    }
    return out;
  });
}

}  // namespace sonde::diagnose::heuristics
