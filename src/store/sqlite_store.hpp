// The embedded default store read back: a TraceStore over DIR/index.sqlite
// (written by the collector or `sonde index`), opened read-only so `sonde
// serve DIR` can run while a collector is still writing (WAL mode: every
// query sees the batches committed when it starts). Thread-safe: one lock
// around the connection.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite_db.hpp"
#include "store/trace_batch.hpp"
#include "store/trace_store.hpp"

namespace sonde::store {

class SqliteStore : public TraceStore {
 public:
  // `path` is the store directory or the index.sqlite file itself. Returns
  // null and sets *error (naming the file and the reason) if it cannot be
  // opened or is not a sonde index of a known schema version.
  static std::unique_ptr<SqliteStore> open(const std::string& path, std::string* error);

  StoreInfo info() override;
  TraceQueryResult find_traces(const TraceQuery& query) override;
  std::vector<StoredTrace> trace(int64_t trace_id) override;
  std::vector<OperationStats> operations() override;
  std::vector<CallEdge> call_edges() override;
  // sqlite_reduced.cpp
  ReducedQueryResult find_reduced(const ReducedQuery& query) override;
  ReducedTraceLookup reduced_trace(int64_t id) override;

  // The last query error ("" if none): queries return empty results then.
  std::string last_error();

 private:
  SqliteStore() = default;
  std::mutex mutex_;
  SqliteDb db_;
  std::string last_error_;
  IndexNames names_;  // used with mutex_ held
};

}  // namespace sonde::store
