// A TraceStore over ClickHouse (tables written by ClickHouseWriter). Same
// answers as the SQLite store for the same traces: the same filters and
// ordering, and operation statistics computed in SQL with the same
// quantile definition (Hyndman & Fan type 7, exact). Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/clickhouse_client.hpp"
#include "store/trace_store.hpp"

namespace sonde::store {

class ClickHouseStore : public TraceStore {
 public:
  // `url`: clickhouse://HOST[:PORT]/DATABASE. Null and *error if the server
  // cannot be reached or the database has no sonde tables.
  static std::unique_ptr<ClickHouseStore> open(const std::string& url, std::string* error);

  StoreInfo info() override;
  TraceQueryResult find_traces(const TraceQuery& query) override;
  std::vector<StoredTrace> trace(int64_t trace_id) override;
  std::vector<OperationStats> operations() override;
  std::vector<CallEdge> call_edges() override;

  // The last query error ("" if none): queries return empty results then.
  std::string last_error();

  // Up to this many valid executions in the database, operations() sorts
  // every duration for exact percentiles, as the embedded store does per
  // operation up to 16,384; past it they come from the duration histogram
  // (operation_buckets, within 0.4 %). Tests lower it to check that path.
  static constexpr uint64_t kExactOperationsLimit = 1'000'000;
  void set_exact_operations_limit(uint64_t executions) { exact_operations_limit_ = executions; }

 private:
  explicit ClickHouseStore(ClickHouseUrl url) : client_(std::move(url)) {}
  // Runs `sql`; rows or, on error, none (and last_error_ set).
  std::vector<std::vector<std::string>> rows(const std::string& sql);

  std::mutex mutex_;
  ClickHouseClient client_;
  std::string last_error_;
  std::vector<OperationStats> operations_from_buckets();  // with mutex_ held
  StoreInfo info_from_summaries();                        // with mutex_ held
  std::vector<std::string> hosts_in(const char* table);   // with mutex_ held

  // Searches (with mutex_ held). SQL pieces: the filter's conditions
  // (" AND …"), a start-time range (" WHERE …"), a page (" LIMIT …").
  // The filter's conditions: those the summary tables have columns for
  // (validity, root operation, host), those only the trace rows can check
  // (duration band, failed), and both.
  static std::string summary_filter_sql(const analysis::TraceFilter& filter);
  static std::string row_filter_sql(const analysis::TraceFilter& filter);
  static std::string filter_sql(const analysis::TraceFilter& filter);
  static std::string time_sql(int64_t from_ns, int64_t to_ns);
  static std::string limit_sql(size_t offset, size_t limit);
  static const char* const kTraceColumns;
  static const char* const kStartOrder;
  // From `table`: traces, or traces_by_duration (the same rows).
  void fetch_entries(const std::string& where, const char* order, size_t offset, size_t limit,
                     std::vector<analysis::TraceEntry>& out, const char* table = "traces");
  uint64_t count_where(const std::string& where);
  // By start time, through trace_buckets (clickhouse_search.cpp).
  TraceQueryResult find_by_start(const TraceQuery& query);
  // Longest first, through trace_durations, and the rows from
  // traces_by_duration where it is whole (clickhouse_search.cpp).
  TraceQueryResult find_longest(const TraceQuery& query);

  // Summary tables (clickhouse_writer.cpp); older databases lack them.
  bool has_call_edges_ = false;
  bool has_operation_buckets_ = false;
  bool has_trace_buckets_ = false;
  bool has_trace_durations_ = false;
  bool has_traces_by_duration_ = false;
  uint64_t exact_operations_limit_ = kExactOperationsLimit;
};

}  // namespace sonde::store
