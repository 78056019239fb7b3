#include "serve/reduced_api.hpp"

#include <nlohmann/json.hpp>
#include <set>

namespace sonde::serve {
namespace {

using nlohmann::json;

constexpr size_t kMaxReducedText = 4096;

ParamError bad_reduced(const std::string& name, const std::string& what) {
  return {name, "parameter '" + name + "': " + what};
}

ApiResponse reduced_unsupported() {
  return api_error(404,
                   "this store holds no reduced traces: only `sonde collect --reduce WINDOW "
                   "--out DIR` writes them, and `sonde serve DIR` shows them");
}

json reduced_entry_json(const store::ReducedEntry& e) {
  // Trace ids as strings (64 bits; JavaScript numbers keep 53), as /api/traces.
  return {{"id", e.id},
          {"first_trace_id", std::to_string(e.first_trace_id)},
          {"root_operation", e.root_operation},
          {"host", e.host},
          {"first_start_ns", e.first_start},
          {"last_start_ns", e.last_start},
          {"traces", e.traces},
          {"failed_traces", e.failed_traces},
          {"mean_ns", e.mean_duration},
          {"min_ns", e.min_duration},
          {"max_ns", e.max_duration}};
}

// Mean exclusive time per position: its mean minus its direct callees'
// means (exact for means, which add up; positions are in eoi order).
std::vector<double> mean_exclusive(const std::vector<analysis::ReducedExecution>& xs) {
  std::vector<double> excl(xs.size(), 0);
  std::vector<size_t> open;
  for (size_t i = 0; i < xs.size(); ++i) {
    excl[i] = xs[i].mean_duration;
    while (!open.empty() && xs[open.back()].ess >= xs[i].ess) open.pop_back();
    if (!open.empty() && xs[open.back()].ess == xs[i].ess - 1) {
      excl[open.back()] -= xs[i].mean_duration;
    }
    open.push_back(i);
  }
  return excl;
}

}  // namespace

std::variant<store::ReducedQuery, ParamError> parse_reduced_query(const QueryParams& params) {
  static const std::set<std::string> known = {"operation", "host",  "from",  "to",
                                              "min_count", "order", "limit", "offset"};
  store::ReducedQuery q;
  for (const auto& [name, value] : params) {
    if (!known.contains(name)) return bad_reduced(name, "unknown parameter");
    if (params.count(name) > 1) return bad_reduced(name, "given more than once");
    if (value.size() > kMaxReducedText) return bad_reduced(name, "longer than 4096 bytes");
    int64_t n = 0;
    if (name == "operation") {
      q.operation = value;
    } else if (name == "host") {
      q.host = value;
    } else if (name == "min_count" || name == "limit" || name == "offset") {
      if (!parse_int64(value, &n) || n < 0) {
        return bad_reduced(name, "needs a non-negative integer, got '" + value.substr(0, 64) + "'");
      }
      if (name == "min_count") q.min_count = static_cast<uint64_t>(n);
      if (name == "offset") q.offset = static_cast<size_t>(n);
      if (name == "limit") {
        if (n > static_cast<int64_t>(kMaxTraceLimit)) return bad_reduced(name, "at most 1000");
        q.limit = static_cast<size_t>(n);
      }
    } else if (name == "from" || name == "to") {
      if (!parse_int64(value, &n)) {
        return bad_reduced(name,
                           "needs a time in ns since the epoch, got '" + value.substr(0, 64) + "'");
      }
      (name == "from" ? q.from_ns : q.to_ns) = n;
    } else if (name == "order") {
      if (value != "count" && value != "start") return bad_reduced(name, "needs count or start");
      q.order = value == "count" ? store::ReducedOrder::kCount : store::ReducedOrder::kStart;
    }
  }
  if (q.to_ns < q.from_ns) return bad_reduced("to", "earlier than from");
  return q;
}

ApiResponse reduced_list(store::TraceStore& store, const QueryParams& params) {
  auto parsed = parse_reduced_query(params);
  if (auto* e = std::get_if<ParamError>(&parsed)) return api_error(400, e->message, e->parameter);
  const auto& q = std::get<store::ReducedQuery>(parsed);
  const store::ReducedQueryResult r = store.find_reduced(q);
  if (!r.supported) return reduced_unsupported();
  if (!r.error.empty()) return api_error(500, "cannot read the reduced traces: " + r.error);
  json list = json::array();
  for (const auto& e : r.entries) list.push_back(reduced_entry_json(e));
  return api_ok(
      {{"matched", r.matched}, {"offset", q.offset}, {"limit", q.limit}, {"reduced", list}});
}

ApiResponse reduced_one(store::TraceStore& store, const std::string& id_text,
                        const QueryParams& params) {
  if (!params.empty()) {
    const std::string& name = params.begin()->first;
    return api_error(400, "parameter '" + name + "': unknown parameter", name);
  }
  int64_t id = 0;
  if (!parse_int64(id_text, &id)) {
    return api_error(400, "reduced trace id: needs an integer, got '" + id_text.substr(0, 64) + "'",
                     "id");
  }
  const store::ReducedTraceLookup found = store.reduced_trace(id);
  if (!found.supported) return reduced_unsupported();
  if (!found.error.empty()) return api_error(500, "cannot read the reduced trace: " + found.error);
  if (!found.trace) return api_error(404, "no reduced trace with id " + std::to_string(id));
  const auto& xs = found.trace->executions;
  const std::vector<double> excl = mean_exclusive(xs);
  json calls = json::array();
  for (size_t i = 0; i < xs.size(); ++i) {
    calls.push_back({{"eoi", xs[i].eoi},
                     {"ess", xs[i].ess},
                     {"operation", xs[i].operation},
                     {"component", xs[i].component},
                     {"mean_offset_ns", xs[i].mean_offset},
                     {"mean_ns", xs[i].mean_duration},
                     {"mean_exclusive_ns", excl[i]},
                     {"min_ns", xs[i].min_duration},
                     {"max_ns", xs[i].max_duration},
                     {"failed", xs[i].failed}});
  }
  json body = reduced_entry_json(found.trace->entry);
  body["calls"] = std::move(calls);
  return api_ok(body);
}

}  // namespace sonde::serve
