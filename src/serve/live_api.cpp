#include "serve/live_api.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "serve/trace_query_params.hpp"
#include "store/index_schema.hpp"

namespace sonde::serve {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kStatsFile = "collect-stats.json";
constexpr int64_t kDefaultLimit = 50;
constexpr int64_t kMaxLimit = 500;

struct LiveRequest {
  int64_t after = 0;
  int64_t limit = kDefaultLimit;
};

std::optional<ApiResponse> parse_live(const QueryParams& params, LiveRequest* r) {
  for (const auto& [name, value] : params) {
    if (name != "after" && name != "limit") {
      return api_error(400, "parameter '" + name + "': unknown parameter", name);
    }
    if (params.count(name) > 1) {
      return api_error(400, "parameter '" + name + "': given more than once", name);
    }
    int64_t n = 0;
    if (!parse_int64(value, &n) || n < 0) {
      return api_error(400,
                       "parameter '" + name + "': needs a non-negative integer, got '" +
                           value.substr(0, 64) + "'",
                       name);
    }
    if (name == "limit" && n > kMaxLimit) {
      return api_error(400, "parameter 'limit': at most " + std::to_string(kMaxLimit), name);
    }
    (name == "after" ? r->after : r->limit) = n;
  }
  return std::nullopt;
}

// A count the collector's version may not write (older files lack the
// queue counts, newer ones the refused count): 0 when absent.
uint64_t optional_count(const json& obj, const char* key) {
  return obj.contains(key) ? obj.at(key).get<uint64_t>() : 0;
}

// The counts of one client, as the collector wrote them (docs/collect.md).
json client_json(const json& c) {
  return {{"id", c.at("id").get<int64_t>()},
          {"peer", c.at("peer").get<std::string>()},
          {"open", c.at("open").get<bool>()},
          {"received", c.at("received").get<uint64_t>()},
          {"stored", c.at("stored").get<uint64_t>()},
          {"rejected", c.at("rejected").get<uint64_t>()},
          {"undecoded_bytes", c.at("undecoded_bytes").get<uint64_t>()},
          {"traces", c.at("traces").get<uint64_t>()},
          {"invalid_traces", c.at("invalid_traces").get<uint64_t>()},
          {"reduced_traces", optional_count(c, "reduced_traces")},
          {"error", c.at("error").get<std::string>()}};
}

}  // namespace

bool is_collector_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / kStatsFile, ec);
}

LiveView::LiveView(std::string dir)
    : dir_(std::move(dir)),
      stats_file_((fs::path(dir_) / kStatsFile).string()),
      index_((fs::path(dir_) / store::kIndexFileName).string()) {}

ApiResponse LiveView::answer(const QueryParams& params) {
  LiveRequest req;
  if (auto bad = parse_live(params, &req)) return *bad;
  // The collector replaces the file by a rename, so a read sees one whole version.
  std::ifstream in(stats_file_, std::ios::binary);
  if (!in) return api_error(500, stats_file_ + ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  const json stats = json::parse(text.str(), nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) {
    return api_error(500, stats_file_ + ": not a JSON object");
  }
  json answer;
  try {
    json clients = json::array();
    uint64_t open = 0;
    for (const json& c : stats.at("clients")) {
      clients.push_back(client_json(c));
      open += clients.back()["open"].get<bool>() ? 1 : 0;
    }
    answer = {{"dir", dir_},
              {"listen", stats.at("listen").get<std::string>()},
              {"collector_error", stats.at("error").get<std::string>()},
              {"totals",
               {{"received", stats.at("received").get<uint64_t>()},
                {"stored", stats.at("stored").get<uint64_t>()},
                {"rejected", stats.at("rejected").get<uint64_t>()},
                {"traces", stats.at("traces").get<uint64_t>()},
                {"invalid_traces", stats.at("invalid_traces").get<uint64_t>()},
                {"reduced_traces", optional_count(stats, "reduced_traces")}}},
              {"reduce", stats.contains("reduce") && stats.at("reduce").get<bool>()},
              {"queued_connections", optional_count(stats, "queued_connections")},
              {"unserved_connections", optional_count(stats, "unserved_connections")},
              {"unserved_bytes", optional_count(stats, "unserved_bytes")},
              {"refused_connections", optional_count(stats, "refused_connections")},
              {"peak_open_clients", stats.at("peak_open_clients").get<uint64_t>()},
              {"open_clients", open},
              {"clients", std::move(clients)}};
  } catch (const json::exception& e) {
    return api_error(500, stats_file_ + ": unexpected content: " + e.what());
  }
  NewTraces fresh;
  const std::string error = index_.traces_after(req.after, static_cast<size_t>(req.limit), &fresh);
  json traces = json::array();
  for (const IndexedTrace& t : fresh.newest) {
    json j = trace_entry_json(t.entry);
    j["client"] = t.client;
    traces.push_back(std::move(j));
  }
  answer["after"] = req.after;
  answer["cursor"] = fresh.cursor;
  answer["new_traces"] = fresh.count;
  answer["traces"] = std::move(traces);
  // The counts stay useful when the index cannot be read: say why, still answer.
  answer["index_error"] = error;
  return api_ok(answer);
}

}  // namespace sonde::serve
