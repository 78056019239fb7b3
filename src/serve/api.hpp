// The JSON API of `sonde serve`, independent of HTTP: a request path and its
// query parameters in, a status, content type and body out. Every parameter
// is validated; a bad or unknown one gives 400 with a JSON body naming it:
//   {"error": "...", "parameter": "min_ns"}
//
//   GET /api/info                  store counts, time range, hosts, generation
//   GET /api/traces?operation=&host=&min_ns=&max_ns=&from=&to=&failed=&invalid=
//                   &order=start|duration&limit=&offset=
//   GET /api/traces/ID             every stored trace with this id, with its
//                                  executions (inclusive and exclusive times)
//   GET /api/reduced?operation=&host=&from=&to=&min_count=&order=count|start&limit=&offset=
//   GET /api/reduced/ID            reduced traces (sonde collect --reduce), reduced_api.hpp
//   GET /api/operations            per-operation statistics
//   GET /api/graph.json            operation dependency graph (nodes, edges)
//   GET /api/graph.svg             the same, laid out by Graphviz `dot`
//   GET /api/context, /api/context/tree   calling-context models (context_api.hpp)
//   GET /api/diagnosis             the diagnosis report served (diagnosis_report.hpp)
//   GET /api/live?after=&limit=    a running collector's clients and new traces (live_api.hpp)
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "store/trace_store.hpp"

namespace sonde::serve {

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using QueryParams = std::multimap<std::string, std::string>;

// A 200 JSON answer, and an error answer {"error": message, "parameter": name}.
// Strings that are not UTF-8 are replaced, never an abort.
ApiResponse api_ok(const nlohmann::json& body);
ApiResponse api_error(int status, const std::string& message, const std::string& parameter = {});

// A trace list entry as the API writes it (id as a string, see docs/serve.md).
nlohmann::json trace_entry_json(const analysis::TraceEntry& e);

class ContextModels;
class LiveView;
struct DiagnosisReport;

// Views that need more than the trace store; a null one answers 404 saying
// how to enable it.
struct ApiExtras {
  ContextModels* contexts = nullptr;           // /api/context, /api/context/tree
  const DiagnosisReport* diagnosis = nullptr;  // /api/diagnosis
  std::string diagnosis_problem;               // why a report found beside the log is not served
  LiveView* live = nullptr;                    // /api/live
};

// Answers one API request; `path` starts with "/api/". Never throws on bad
// input; a store failure gives 500 with the reason.
ApiResponse handle_api(store::TraceStore& store, const std::string& path, const QueryParams& params,
                       const ApiExtras& extras = {});

}  // namespace sonde::serve
