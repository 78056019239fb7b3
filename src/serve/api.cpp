#include "serve/api.hpp"

#include <exception>
#include <nlohmann/json.hpp>
#include <variant>

#include "analysis/render/graphviz_render.hpp"
#include "serve/call_graph.hpp"
#include "serve/context_api.hpp"
#include "serve/diagnosis_report.hpp"
#include "serve/live_api.hpp"
#include "serve/reduced_api.hpp"
#include "serve/trace_query_params.hpp"

namespace sonde::serve {
namespace {

using nlohmann::json;

std::string dump(const json& doc) {
  // Names come from the monitored program: bad UTF-8 must not abort the answer.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

ApiResponse error(int status, const std::string& message, const std::string& parameter = {}) {
  json body = {{"error", message}};
  if (!parameter.empty()) body["parameter"] = parameter;
  return {status, "application/json", dump(body)};
}

ApiResponse ok(const json& body) { return {200, "application/json", dump(body)}; }

}  // namespace

ApiResponse api_ok(const nlohmann::json& body) { return ok(body); }
ApiResponse api_error(int status, const std::string& message, const std::string& parameter) {
  return error(status, message, parameter);
}

namespace {

// Endpoints without parameters reject every parameter (a typo should not pass silently).
std::optional<ApiResponse> reject_params(const QueryParams& params) {
  if (params.empty()) return std::nullopt;
  const std::string& name = params.begin()->first;
  return error(400, "parameter '" + name + "': unknown parameter", name);
}

}  // namespace

nlohmann::json trace_entry_json(const analysis::TraceEntry& e) {
  // Ids as strings: they use all 64 bits, and JavaScript numbers keep 53.
  json j = {{"trace_id", std::to_string(e.trace_id)},
            {"root_operation", e.root_operation},
            {"host", e.host},
            {"thread_id", e.thread_id},
            {"start_ns", e.start},
            {"duration_ns", e.duration},
            {"executions", e.executions},
            {"failed_executions", e.failed},
            {"valid", e.valid}};
  if (e.parent_trace_id >= 0 && e.parent_trace_id != e.trace_id) {
    j["parent_trace_id"] = std::to_string(e.parent_trace_id);
  }
  if (!e.valid) j["problem"] = e.problem;
  return j;
}

namespace {

// Exclusive time of each execution: its inclusive time minus its direct
// callees' (executions are in eoi order; a callee has ess one deeper).
std::vector<int64_t> exclusive_times(const std::vector<store::StoredExecution>& xs) {
  std::vector<int64_t> excl(xs.size(), 0);
  std::vector<size_t> stack;  // indices of the open executions
  for (size_t i = 0; i < xs.size(); ++i) {
    const auto& x = xs[i];
    const int64_t incl = x.tout >= 0 ? x.tout - x.tin : 0;
    excl[i] = incl;
    while (!stack.empty() && xs[stack.back()].ess >= x.ess) stack.pop_back();
    if (!stack.empty() && xs[stack.back()].ess == x.ess - 1) excl[stack.back()] -= incl;
    stack.push_back(i);
  }
  return excl;
}

json trace_json(const store::StoredTrace& t) {
  json j = trace_entry_json(t.entry);
  const std::vector<int64_t> excl = exclusive_times(t.executions);
  json xs = json::array();
  for (size_t i = 0; i < t.executions.size(); ++i) {
    const auto& x = t.executions[i];
    json e = {{"eoi", x.eoi},
              {"ess", x.ess},
              {"operation", x.operation},
              {"component", x.component},
              {"host", x.host},
              {"tin_ns", x.tin},
              {"tout_ns", x.tout},
              {"inclusive_ns", x.tout >= 0 ? x.tout - x.tin : 0},
              {"exclusive_ns", excl[i]},
              {"failed", x.failed}};
    if (x.failed) e["cause"] = x.cause;
    xs.push_back(std::move(e));
  }
  j["calls"] = std::move(xs);
  return j;
}

ApiResponse info(store::TraceStore& store) {
  const store::StoreInfo i = store.info();
  return ok({{"traces", i.traces},
             {"invalid_traces", i.invalid_traces},
             {"executions", i.executions},
             {"first_start_ns", i.first_start},
             {"last_start_ns", i.last_start},
             {"hosts", i.hosts},
             {"reduced", i.reduced_traces > 0},
             {"reduced_traces", i.reduced_traces},
             {"reduced_from_traces", i.reduced_from_traces},
             {"generation", i.generation}});
}

ApiResponse traces(store::TraceStore& store, const QueryParams& params) {
  auto parsed = parse_trace_query(params);
  if (auto* e = std::get_if<ParamError>(&parsed)) return error(400, e->message, e->parameter);
  const auto& q = std::get<store::TraceQuery>(parsed);
  const store::TraceQueryResult r = store.find_traces(q);
  json list = json::array();
  for (const auto& e : r.entries) list.push_back(trace_entry_json(e));
  return ok({{"matched", r.matched},
             {"matched_estimated", r.matched_estimated},
             {"offset", q.offset},
             {"limit", q.limit},
             {"traces", list}});
}

ApiResponse one_trace(store::TraceStore& store, const std::string& id_text,
                      const QueryParams& params) {
  if (auto r = reject_params(params)) return *r;
  int64_t id = 0;
  if (!parse_int64(id_text, &id)) {
    return error(400, "trace id: needs an integer, got '" + id_text.substr(0, 64) + "'", "id");
  }
  const std::vector<store::StoredTrace> found = store.trace(id);
  if (found.empty()) return error(404, "no trace with id " + std::to_string(id));
  json list = json::array();
  for (const auto& t : found) list.push_back(trace_json(t));
  return ok({{"trace_id", std::to_string(id)}, {"traces", list}});
}

ApiResponse operations(store::TraceStore& store) {
  json list = json::array();
  for (const store::OperationStats& o : store.operations()) {
    list.push_back({{"operation", o.operation},
                    {"count", o.count},
                    {"failed", o.failed},
                    {"mean_ns", o.mean},
                    {"min_ns", o.min},
                    {"max_ns", o.max},
                    {"p50_ns", o.p50},
                    {"p90_ns", o.p90},
                    {"p95_ns", o.p95},
                    {"p99_ns", o.p99}});
  }
  return ok({{"operations", list}});
}

ApiResponse graph_svg(store::TraceStore& store) {
  const analysis::RenderResult r = analysis::render_dot(call_graph_dot(store.call_edges()), "svg");
  if (!r.ok) return error(503, "cannot draw the graph: " + r.error);
  return {200, "image/svg+xml", r.output};
}

}  // namespace

ApiResponse handle_api(store::TraceStore& store, const std::string& path, const QueryParams& params,
                       const ApiExtras& extras) {
  try {
    if (path == "/api/context" || path == "/api/context/tree") {
      if (!extras.contexts) return error(404, "calling-context models are not available here");
      const uint64_t generation = store.info().generation;
      return path == "/api/context" ? extras.contexts->summary(params, generation)
                                    : extras.contexts->tree(params, generation);
    }
    if (path == "/api/diagnosis") {
      if (auto r = reject_params(params)) return *r;
      if (!extras.diagnosis) {
        return error(404, extras.diagnosis_problem.empty()
                              ? "no diagnosis report is served (sonde serve --diagnosis DIR)"
                              : extras.diagnosis_problem);
      }
      return {200, "application/json", extras.diagnosis->body};
    }
    if (path == "/api/live") {
      if (!extras.live) {
        return error(404,
                     "not a collector's directory: the live view needs `sonde serve DIR` "
                     "on the --out DIR of a running `sonde collect`");
      }
      return extras.live->answer(params);
    }
    if (path == "/api/info") return reject_params(params).value_or(info(store));
    if (path == "/api/traces") return traces(store, params);
    if (path.starts_with("/api/traces/")) {
      return one_trace(store, path.substr(std::string("/api/traces/").size()), params);
    }
    if (path == "/api/reduced") return reduced_list(store, params);
    if (path.starts_with("/api/reduced/")) {
      return reduced_one(store, path.substr(std::string("/api/reduced/").size()), params);
    }
    if (path == "/api/operations") return reject_params(params).value_or(operations(store));
    if (path == "/api/graph.json") {
      return reject_params(params).value_or(ok(call_graph_json(store.call_edges())));
    }
    if (path == "/api/graph.svg") {
      if (auto r = reject_params(params)) return *r;
      return graph_svg(store);
    }
    return error(404, "no such API endpoint: " + path.substr(0, 128));
  } catch (const std::exception& e) {
    return error(500, std::string("store failed: ") + e.what());
  }
}

}  // namespace sonde::serve
