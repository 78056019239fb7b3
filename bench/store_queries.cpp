// How fast a store answers the web UI's queries as it grows (issue 25: at
// 10^9 records, p95 within 200 ms embedded, 1 s ClickHouse). Opens
// DIR/index.sqlite (written by `sonde collect`, `sonde index` or
// bench_index_write) or a ClickHouse database (bench_clickhouse_fill, or
// collectors) and times each kind of query the UI sends, QUERIES times
// with random parameters:
//
//   bench_store_queries DIR|clickhouse://HOST:PORT/DATABASE [QUERIES=40]
//
// Kinds: the first page of all traces; a window of 1 % of the stored time; the traces of
// one root operation (substring); the longest traces; a duration band;
// one trace by id; the per-operation statistics; the dependency graph.
// Prints per kind the median, p95 and maximum in milliseconds and how many
// of its searches gave an estimated count (TraceQueryResult), and the
// store's size per trace.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "store/clickhouse_client.hpp"
#include "store/clickhouse_store.hpp"
#include "store/index_sink.hpp"
#include "store/sqlite_store.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Kind {
  std::string name;
  std::vector<double> ms;
  int estimated = 0;  // searches whose count was an estimate
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * p;
  const auto lo = static_cast<size_t>(h);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr,
                 "usage: bench_store_queries DIR|clickhouse://HOST:PORT/DATABASE [QUERIES=40]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const long queries = argc > 2 ? std::atol(argv[2]) : 40;
  if (queries < 1) {
    std::fprintf(stderr, "bench_store_queries: QUERIES >= 1\n");
    return 2;
  }
  std::string error;
  std::unique_ptr<sonde::store::TraceStore> store;
  std::function<std::string()> last_error;
  if (sonde::store::is_clickhouse_url(dir)) {
    auto ch = sonde::store::ClickHouseStore::open(dir, &error);
    if (ch) last_error = [s = ch.get()] { return s->last_error(); };
    store = std::move(ch);
  } else {
    auto sqlite = sonde::store::SqliteStore::open(dir, &error);
    if (sqlite) last_error = [s = sqlite.get()] { return s->last_error(); };
    store = std::move(sqlite);
  }
  if (!store) {
    std::fprintf(stderr, "bench_store_queries: %s\n", error.c_str());
    return 1;
  }
  const auto open_start = Clock::now();
  const sonde::store::StoreInfo info = store->info();
  const double info_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - open_start).count();
  const std::vector<sonde::store::OperationStats> ops = store->operations();
  if (info.traces == 0 || ops.empty()) {
    std::fprintf(stderr, "bench_store_queries: %s holds no valid traces\n", dir.c_str());
    return 1;
  }
  std::mt19937_64 rng(7);
  const auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, std::max(lo, hi))(rng);
  };
  // Trace ids to look up: from the random windows.
  std::vector<int64_t> ids;
  std::vector<Kind> kinds;
  // `query` returns whether its count was estimated.
  const auto time = [&](const std::string& name, const std::function<bool()>& query) {
    auto it =
        std::find_if(kinds.begin(), kinds.end(), [&](const Kind& k) { return k.name == name; });
    if (it == kinds.end()) it = kinds.insert(kinds.end(), Kind{name, {}});
    const auto t = Clock::now();
    it->estimated += query() ? 1 : 0;
    it->ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    if (const std::string e = last_error(); !e.empty()) {
      std::fprintf(stderr, "bench_store_queries: %s: %s\n", name.c_str(), e.c_str());
      std::exit(1);
    }
  };
  const int64_t window_ns = std::max<int64_t>(1, (info.last_start - info.first_start) / 100);
  for (long q = 0; q < queries; ++q) {
    sonde::store::TraceQuery all;
    time("first page", [&] { return store->find_traces(all).matched_estimated; });
    sonde::store::TraceQuery window;
    window.from_ns = uniform(info.first_start, info.last_start - window_ns);
    window.to_ns = window.from_ns + window_ns;
    time("1% window", [&] {
      const auto r = store->find_traces(window);
      if (!r.entries.empty())
        ids.push_back(
            r.entries[static_cast<size_t>(uniform(0, static_cast<int64_t>(r.entries.size()) - 1))]
                .trace_id);
      return r.matched_estimated;
    });
    sonde::store::TraceQuery by_op;
    by_op.filter.operation =
        ops[static_cast<size_t>(uniform(0, static_cast<int64_t>(ops.size()) - 1))].operation;
    time("root operation", [&] { return store->find_traces(by_op).matched_estimated; });
    sonde::store::TraceQuery longest;
    longest.order = sonde::analysis::TraceOrder::kLongest;
    time("longest", [&] { return store->find_traces(longest).matched_estimated; });
    const sonde::store::OperationStats& op =
        ops[static_cast<size_t>(uniform(0, static_cast<int64_t>(ops.size()) - 1))];
    sonde::store::TraceQuery band;
    band.filter.min_duration = static_cast<int64_t>(op.p50);
    band.filter.max_duration = static_cast<int64_t>(op.p90);
    time("duration band", [&] { return store->find_traces(band).matched_estimated; });
    if (!ids.empty()) {
      const int64_t id = ids[static_cast<size_t>(uniform(0, static_cast<int64_t>(ids.size()) - 1))];
      time("one trace", [&] {
        if (store->trace(id).empty()) {
          std::fprintf(stderr, "bench_store_queries: trace %lld not found\n",
                       static_cast<long long>(id));
          std::exit(1);
        }
        return false;
      });
    }
    time("operations", [&] {
      store->operations();
      return false;
    });
    time("call graph", [&] {
      store->call_edges();
      return false;
    });
  }
  std::error_code ec;
  uint64_t bytes = 0;
  if (sonde::store::is_clickhouse_url(dir)) {
    // The database's active parts (compressed columns, marks, indexes).
    sonde::store::ClickHouseUrl url;
    sonde::store::parse_clickhouse_url(dir, &url);
    sonde::store::ClickHouseClient client(url);
    std::string out;
    if (client
            .query("SELECT sum(bytes) FROM system.parts WHERE active AND database = " +
                       sonde::store::ClickHouseClient::quote(url.database),
                   &out, false)
            .empty()) {
      bytes = std::strtoull(out.c_str(), nullptr, 10);
    }
  } else {
    bytes = std::filesystem::file_size(std::filesystem::path(dir) / "index.sqlite", ec);
  }
  const uint64_t traces = info.traces + info.invalid_traces;
  std::printf(
      "%s: %llu traces, %llu executions, index %.1f MiB (%.1f bytes per trace); info %.1f ms\n",
      dir.c_str(), static_cast<unsigned long long>(traces),
      static_cast<unsigned long long>(info.executions),
      static_cast<double>(ec ? 0 : bytes) / (1024.0 * 1024.0),
      traces == 0 ? 0.0 : static_cast<double>(ec ? 0 : bytes) / static_cast<double>(traces),
      info_ms);
  std::printf("%-16s %8s %10s %10s %10s %10s\n", "query", "runs", "median ms", "p95 ms", "max ms",
              "estimated");
  for (const Kind& k : kinds) {
    std::printf("%-16s %8zu %10.1f %10.1f %10.1f %10d\n", k.name.c_str(), k.ms.size(),
                percentile(k.ms, 0.5), percentile(k.ms, 0.95),
                *std::max_element(k.ms.begin(), k.ms.end()), k.estimated);
  }
  return 0;
}
