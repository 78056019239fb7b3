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

 private:
  explicit ClickHouseStore(ClickHouseUrl url) : client_(std::move(url)) {}
  // Runs `sql`; rows or, on error, none (and last_error_ set).
  std::vector<std::vector<std::string>> rows(const std::string& sql);

  std::mutex mutex_;
  ClickHouseClient client_;
  std::string last_error_;
  bool has_call_edges_ = false;  // the call_edges table (older databases lack it)
};

}  // namespace sonde::store
