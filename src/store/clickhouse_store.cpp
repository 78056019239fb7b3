#include "store/clickhouse_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "analysis/model/duration_accumulator.hpp"

namespace sonde::store {

namespace {

int64_t to_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }
uint64_t to_u64(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }
double to_double(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

}  // namespace

const char* const ClickHouseStore::kTraceColumns =
    "id, trace_id, root_operation, start_ns, duration_ns, host, thread_id, parent_trace_id, "
    "executions, failed, valid, problem";

const char* const ClickHouseStore::kStartOrder = " ORDER BY start_ns, trace_id, id";

namespace {

analysis::TraceEntry read_entry(const std::vector<std::string>& r) {
  analysis::TraceEntry e;
  e.trace_id = to_i64(r[1]);
  e.root_operation = r[2];
  e.start = to_i64(r[3]);
  e.duration = to_i64(r[4]);
  e.host = r[5];
  e.thread_id = to_i64(r[6]);
  e.parent_trace_id = to_i64(r[7]);
  e.executions = static_cast<uint32_t>(to_u64(r[8]));
  e.failed = static_cast<uint32_t>(to_u64(r[9]));
  e.valid = r[10] != "0";
  e.problem = r[11];
  return e;
}

// Q(p) of the sorted array `a` with `n` elements, Hyndman & Fan type 7, as
// stats::percentile_sorted computes it: a[lo] + frac * (a[hi] - a[lo]).
std::string quantile_sql(const char* p) {
  const std::string h = std::string("((n - 1) * ") + p + ")";
  const std::string lo = "toUInt64(floor(" + h + "))";
  const std::string a_lo = "arrayElement(a, " + lo + " + 1)";
  const std::string a_hi = "arrayElement(a, least(" + lo + " + 2, n))";
  return a_lo + " + (" + h + " - floor(" + h + ")) * (" + a_hi + " - " + a_lo + ")";
}

}  // namespace

std::unique_ptr<ClickHouseStore> ClickHouseStore::open(const std::string& url, std::string* error) {
  ClickHouseUrl parsed;
  if (std::string e = parse_clickhouse_url(url, &parsed); !e.empty()) {
    *error = e;
    return nullptr;
  }
  std::unique_ptr<ClickHouseStore> store(new ClickHouseStore(parsed));
  std::string result;
  if (std::string e = store->client_.query("SELECT count() FROM system.tables WHERE database = " +
                                               ClickHouseClient::quote(parsed.database) +
                                               " AND name IN ('traces', 'executions')",
                                           &result, false);
      !e.empty()) {
    *error = e;
    return nullptr;
  }
  if (result.rfind("2", 0) != 0) {
    *error = url + ": no sonde tables (traces, executions) in database " + parsed.database;
    return nullptr;
  }
  // The call-edge table (clickhouse_writer.cpp) comes with the first
  // collector of this version to open the database; before that, the
  // dependency graph is counted from the executions.
  for (auto [name, has] : {std::pair{"call_edges", &store->has_call_edges_},
                           std::pair{"operation_buckets", &store->has_operation_buckets_},
                           std::pair{"trace_buckets", &store->has_trace_buckets_},
                           std::pair{"trace_durations", &store->has_trace_durations_},
                           std::pair{"traces_by_duration", &store->has_traces_by_duration_}}) {
    result.clear();
    store->client_.query("SELECT count() FROM system.tables WHERE database = " +
                             ClickHouseClient::quote(parsed.database) + " AND name = '" + name +
                             "'",
                         &result, false);
    *has = result.rfind("1", 0) == 0;
  }
  // The searches' summaries only once their fill completed
  // (clickhouse_writer.cpp, create_summaries). An older database has no
  // summaries_filled table: the query fails and neither is read.
  result.clear();
  if (!store->client_.query("SELECT name FROM summaries_filled", &result).empty()) result.clear();
  const auto filled = ClickHouseClient::parse_rows(result);
  for (auto [name, has] : {std::pair{"trace_buckets", &store->has_trace_buckets_},
                           std::pair{"trace_durations", &store->has_trace_durations_},
                           std::pair{"traces_by_duration", &store->has_traces_by_duration_}}) {
    *has = *has &&
           std::any_of(filled.begin(), filled.end(), [name = std::string(name)](const auto& r) {
             return !r.empty() && r[0] == name;
           });
  }
  return store;
}

std::string ClickHouseStore::last_error() {
  std::lock_guard lock(mutex_);
  return last_error_;
}

std::vector<std::vector<std::string>> ClickHouseStore::rows(const std::string& sql) {
  std::string result;
  if (std::string e = client_.query(sql, &result); !e.empty()) {
    last_error_ = e;
    return {};
  }
  return ClickHouseClient::parse_rows(result);
}

StoreInfo ClickHouseStore::info() {
  std::lock_guard lock(mutex_);
  last_error_.clear();
  StoreInfo info;
  if (has_trace_buckets_ && has_operation_buckets_) return info_from_summaries();
  const auto totals = rows(
      "SELECT sum(valid), sum(1 - valid), sumIf(executions, valid = 1), "
      "if(sum(valid) = 0, 0, minIf(start_ns, valid = 1)), "
      "if(sum(valid) = 0, 0, maxIf(start_ns, valid = 1)), count() FROM traces");
  if (!totals.empty() && totals[0].size() == 6) {
    info.traces = to_u64(totals[0][0]);
    info.invalid_traces = to_u64(totals[0][1]);
    info.executions = to_u64(totals[0][2]);
    info.first_start = to_i64(totals[0][3]);
    info.last_start = to_i64(totals[0][4]);
    // The tables only grow: the row count is a generation.
    info.generation = to_u64(totals[0][5]);
  }
  info.hosts = hosts_in("traces");
  return info;
}

std::string ClickHouseStore::summary_filter_sql(const analysis::TraceFilter& f) {
  std::string sql;
  if (f.only_invalid) {
    sql += " AND valid = 0";
  } else if (!f.include_invalid) {
    sql += " AND valid = 1";
  }
  if (!f.operation.empty()) {
    sql += " AND position(root_operation, " + ClickHouseClient::quote(f.operation) + ") > 0";
  }
  if (!f.host.empty()) sql += " AND host = " + ClickHouseClient::quote(f.host);
  return sql;
}

std::string ClickHouseStore::row_filter_sql(const analysis::TraceFilter& f) {
  std::string sql = " AND duration_ns >= " + std::to_string(f.min_duration);
  if (f.max_duration >= 0) sql += " AND duration_ns <= " + std::to_string(f.max_duration);
  if (f.only_failed) sql += " AND failed > 0";
  return sql;
}

std::string ClickHouseStore::filter_sql(const analysis::TraceFilter& f) {
  return summary_filter_sql(f) + row_filter_sql(f);
}

std::string ClickHouseStore::time_sql(int64_t from_ns, int64_t to_ns) {
  return " WHERE start_ns >= " + std::to_string(from_ns) +
         " AND start_ns <= " + std::to_string(to_ns);
}

std::string ClickHouseStore::limit_sql(size_t offset, size_t limit) {
  auto clamp = [](size_t n) {
    return std::to_string(std::min<size_t>(n, std::numeric_limits<int64_t>::max()));
  };
  return " LIMIT " + clamp(offset) + ", " + clamp(limit);
}

void ClickHouseStore::fetch_entries(const std::string& where, const char* order, size_t offset,
                                    size_t limit, std::vector<analysis::TraceEntry>& out,
                                    const char* table) {
  for (const auto& r : rows(std::string("SELECT ") + kTraceColumns + " FROM " + table + where +
                            order + limit_sql(offset, limit))) {
    if (r.size() == 12) out.push_back(read_entry(r));
  }
}

uint64_t ClickHouseStore::count_where(const std::string& where) {
  const auto count = rows("SELECT count() FROM traces" + where);
  return count.empty() || count[0].empty() ? 0 : to_u64(count[0][0]);
}

// The same totals from the summary tables, without reading the traces
// (info() took 122 ms at 10^7 records and grew with them): traces per
// validity, time bounds and hosts from trace_buckets, valid executions
// from operation_buckets (its view counts executions of valid traces, as
// the sum of their traces' execution counts), and the row count, which
// ClickHouse keeps per part, for the generation.
std::vector<std::string> ClickHouseStore::hosts_in(const char* table) {
  std::vector<std::string> hosts;
  for (const auto& r : rows(std::string("SELECT DISTINCT host FROM ") + table +
                            " WHERE host != '' ORDER BY host")) {
    if (!r.empty()) hosts.push_back(r[0]);
  }
  return hosts;
}

StoreInfo ClickHouseStore::info_from_summaries() {
  StoreInfo info;
  const auto totals = rows(
      "SELECT countMergeIf(traces, valid = 1) AS v, countMergeIf(traces, valid = 0), "
      "if(v = 0, 0, minMergeIf(first, valid = 1)), if(v = 0, 0, maxMergeIf(last, valid = 1)) "
      "FROM trace_buckets");
  if (!totals.empty() && totals[0].size() == 4) {
    info.traces = to_u64(totals[0][0]);
    info.invalid_traces = to_u64(totals[0][1]);
    info.first_start = to_i64(totals[0][2]);
    info.last_start = to_i64(totals[0][3]);
  }
  const auto executions = rows("SELECT countMerge(n) FROM operation_buckets");
  if (!executions.empty() && !executions[0].empty()) info.executions = to_u64(executions[0][0]);
  const auto generation = rows("SELECT count() FROM traces");
  if (!generation.empty() && !generation[0].empty()) info.generation = to_u64(generation[0][0]);
  info.hosts = hosts_in("trace_buckets");
  return info;
}

TraceQueryResult ClickHouseStore::find_traces(const TraceQuery& q) {
  std::lock_guard lock(mutex_);
  last_error_.clear();
  if (has_trace_buckets_ && q.from_ns <= q.to_ns) {
    if (q.order == analysis::TraceOrder::kStart) return find_by_start(q);
    if (has_trace_durations_) return find_longest(q);
  }
  // Databases from before the summaries: every matching row is read, so
  // the time grows with the store.
  const std::string where = time_sql(q.from_ns, q.to_ns) + filter_sql(q.filter);
  const char* order = q.order == analysis::TraceOrder::kLongest
                          ? " ORDER BY duration_ns DESC, trace_id, id"
                          : kStartOrder;
  TraceQueryResult result;
  result.matched = count_where(where);
  if (q.limit == 0) return result;
  fetch_entries(where, order, q.offset, q.limit, result.entries);
  return result;
}

std::vector<StoredTrace> ClickHouseStore::trace(int64_t trace_id) {
  std::lock_guard lock(mutex_);
  last_error_.clear();
  std::vector<StoredTrace> traces;
  // The executions first: their table is ordered by trace id, the traces
  // table by start time, and a trace row's start is its executions'
  // earliest tin (clickhouse_writer.cpp), so (start_ns, trace_id) finds its
  // row through the primary key instead of a scan of every trace (313 ms
  // median at 3.3 M traces before, docs/PERFORMANCE.md). A trace row
  // without executions (an invalid trace with nothing reconstructed) is
  // found by the scan, when no execution has the id.
  const auto executions = rows(
      "SELECT trace, operation, component, host, tin, tout, eoi, ess, failed, cause FROM "
      "executions WHERE trace_id = " +
      std::to_string(trace_id) + " ORDER BY trace, seq");
  std::map<uint64_t, int64_t> start_of_row;
  for (const auto& r : executions) {
    if (r.size() != 10) continue;
    const int64_t tin = to_i64(r[4]);
    auto [it, added] = start_of_row.emplace(to_u64(r[0]), tin);
    if (!added) it->second = std::min(it->second, tin);
  }
  std::string where = " WHERE trace_id = " + std::to_string(trace_id);
  if (!start_of_row.empty()) {
    std::string starts, ids;
    for (const auto& [row, start] : start_of_row) {
      starts += (starts.empty() ? "" : ", ") + std::to_string(start);
      ids += (ids.empty() ? "" : ", ") + std::to_string(row);
    }
    where += " AND start_ns IN (" + starts + ") AND id IN (" + ids + ")";
  }
  std::map<uint64_t, size_t> by_row;
  for (const auto& r : rows(std::string("SELECT ") + kTraceColumns + " FROM traces" + where +
                            " ORDER BY start_ns, id")) {
    if (r.size() != 12) continue;
    by_row[to_u64(r[0])] = traces.size();
    traces.push_back({read_entry(r), {}});
  }
  for (const auto& r : executions) {
    if (r.size() != 10) continue;
    const auto it = by_row.find(to_u64(r[0]));
    if (it == by_row.end()) continue;  // inserted, its trace row not yet
    traces[it->second].executions.push_back(
        {r[1], r[2], r[3], to_i64(r[4]), to_i64(r[5]), static_cast<int32_t>(to_i64(r[6])),
         static_cast<int32_t>(to_i64(r[7])), r[8] != "0", r[9]});
  }
  return traces;
}

std::vector<OperationStats> ClickHouseStore::operations() {
  std::lock_guard lock(mutex_);
  last_error_.clear();
  if (has_operation_buckets_) {
    const auto n = rows("SELECT countMerge(n) FROM operation_buckets");
    if (!n.empty() && to_u64(n[0][0]) > exact_operations_limit_) return operations_from_buckets();
  }
  const std::string sql =
      "SELECT operation, n, failed, mean, mn, mx, " + quantile_sql("0.5") + ", " +
      quantile_sql("0.9") + ", " + quantile_sql("0.95") + ", " + quantile_sql("0.99") +
      " FROM (SELECT operation, count() AS n, sum(failed) AS failed, sum(tout - tin) / count() "
      "AS mean, min(tout - tin) AS mn, max(tout - tin) AS mx, arraySort(groupArray(tout - tin)) "
      "AS a, sum(tout - tin) AS total FROM executions WHERE valid = 1 GROUP BY operation) "
      "ORDER BY total DESC, operation";
  std::vector<OperationStats> out;
  for (const auto& r : rows(sql)) {
    if (r.size() != 10) continue;
    OperationStats o;
    o.operation = r[0];
    o.count = to_u64(r[1]);
    o.failed = to_u64(r[2]);
    o.mean = to_double(r[3]);
    o.min = to_i64(r[4]);
    o.max = to_i64(r[5]);
    o.p50 = to_double(r[6]);
    o.p90 = to_double(r[7]);
    o.p95 = to_double(r[8]);
    o.p99 = to_double(r[9]);
    out.push_back(std::move(o));
  }
  return out;
}

// Every operation's statistics from its duration histogram
// (operation_buckets): count, failed, mean, min and max exact, the
// percentiles those of analysis::DurationAccumulator for the same values
// in histogram mode (within 0.4 % of the exact ones).
std::vector<OperationStats> ClickHouseStore::operations_from_buckets() {
  struct Operation {
    std::vector<std::pair<size_t, uint64_t>> buckets;
    uint64_t failed = 0;
    int64_t total = 0, min = std::numeric_limits<int64_t>::max(),
            max = std::numeric_limits<int64_t>::min();
  };
  std::map<std::string, Operation> by_name;
  for (const auto& r :
       rows("SELECT operation, bucket, countMerge(n), sumMerge(failed), sumMerge(total), "
            "minMerge(mn), maxMerge(mx) FROM operation_buckets GROUP BY operation, bucket")) {
    if (r.size() != 7) continue;
    Operation& o = by_name[r[0]];
    o.buckets.emplace_back(static_cast<size_t>(to_u64(r[1])), to_u64(r[2]));
    o.failed += to_u64(r[3]);
    o.total += to_i64(r[4]);
    o.min = std::min(o.min, to_i64(r[5]));
    o.max = std::max(o.max, to_i64(r[6]));
  }
  std::vector<std::pair<int64_t, OperationStats>> out;
  for (const auto& [name, o] : by_name) {
    const analysis::DurationAccumulator d =
        analysis::DurationAccumulator::from_histogram(o.buckets, o.total, o.min, o.max);
    if (d.count() == 0) continue;
    OperationStats s;
    s.operation = name;
    s.count = d.count();
    s.failed = o.failed;
    s.mean = static_cast<double>(o.total) / static_cast<double>(d.count());
    s.min = o.min;
    s.max = o.max;
    s.p50 = d.quantile(0.5);
    s.p90 = d.quantile(0.9);
    s.p95 = d.quantile(0.95);
    s.p99 = d.quantile(0.99);
    out.emplace_back(o.total, std::move(s));
  }
  // As the exact query: by total time, then name.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.operation < b.second.operation;
  });
  std::vector<OperationStats> result;
  for (auto& [total, s] : out) result.push_back(std::move(s));
  return result;
}

std::vector<CallEdge> ClickHouseStore::call_edges() {
  std::lock_guard lock(mutex_);
  last_error_.clear();
  std::vector<CallEdge> out;
  const char* sql = has_call_edges_
                        ? "SELECT caller, operation, sum(calls) FROM call_edges "
                          "GROUP BY caller, operation ORDER BY caller, operation"
                        : "SELECT caller, operation, count() FROM executions WHERE valid = 1 "
                          "GROUP BY caller, operation ORDER BY caller, operation";
  for (const auto& r : rows(sql)) {
    if (r.size() == 3) out.push_back({r[0], r[1], to_u64(r[2])});
  }
  return out;
}

}  // namespace sonde::store
