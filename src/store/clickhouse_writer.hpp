// Writes reconstructed traces into ClickHouse (schema in
// docs/formats/store.md, "ClickHouse"): `traces` and `executions` tables,
// MergeTree, inserted in batches of TabSeparated rows over HTTP. Unlike the
// SQLite index, aggregates are not stored: ClickHouse computes operation
// statistics and call edges from `executions` at query time (each
// execution row carries its caller and its trace's validity for that).
//
// Several collectors may write one database (docs/collect.md, "Several
// collectors, one ClickHouse database"): each is started with its own
// collector id N (0-65535) and then owns the row ids [N<<48, (N+1)<<48) and
// the client ids [N<<32, (N+1)<<32); a restarted collector continues after
// the largest ids of its own range only, so no two collectors ever hand out
// the same id, and none has to coordinate with the others.
#pragma once

#include <cstdint>
#include <string>

#include "store/clickhouse_client.hpp"
#include "store/index_sink.hpp"

namespace sonde::store {

class ClickHouseWriter final : public TraceIndex {
 public:
  explicit ClickHouseWriter(ClickHouseUrl url, size_t batch_traces = 5000,
                            uint32_t collector_id = 0);
  static constexpr uint32_t kMaxCollectorId = 65535;
  ~ClickHouseWriter() override;

  // Creates the database and tables if missing. Returns "" or the error.
  std::string open();
  // The trace rows one fill of a summary from `traces` reads per INSERT
  // when open() upgrades an older database (create_summaries): each
  // INSERT must finish within the client's 60-s read timeout. Before open().
  void set_fill_slice_traces(uint64_t traces) { fill_slice_traces_ = traces; }
  static constexpr uint64_t kFillSliceTraces = 2'000'000;

  void add(const analysis::Trace& trace, int64_t client) override;
  void add_invalid(const analysis::InvalidTrace& trace, int64_t client) override;
  // Kept in memory only (ids continue after those in `traces`).
  void put_client(const ClientRecord& client) override;
  // Not supported (the collector refuses --reduce with ClickHouse): set error().
  void count(const analysis::Trace& trace) override;
  void add_reduced(const analysis::ReducedTrace& trace, int64_t client) override;
  int64_t next_client_id() const override { return next_client_id_; }
  std::string commit() override;
  std::string finish() override;
  const std::string& error() const override { return error_; }

 private:
  void insert(const analysis::Trace& trace, bool valid, const std::string& problem, int64_t client);
  void reduction_unsupported();
  std::string create(const std::string& sql, bool in_database);
  std::string create_summaries();
  std::string fill_from_traces(const std::string& table, const std::string& select,
                               const std::string& tail);

  ClickHouseClient client_;
  size_t batch_traces_;
  std::string trace_rows_, execution_rows_;
  size_t pending_ = 0;
  uint32_t collector_id_;
  uint64_t next_id_ = 1;
  int64_t next_client_id_ = 1;
  std::string error_;
  bool open_ = false;
  uint64_t fill_slice_traces_ = kFillSliceTraces;
};

// The CREATE statements, for the docs and for cluster setups.
std::string clickhouse_schema_sql(const std::string& database);

// The `trace_buckets` summary counts traces per 2^36 ns (68.7 s) of start
// time: bucket = start_ns >> kTraceBucketShift (floor, as ClickHouse's
// bitShiftRight of an Int64). Wide enough that a year of traces is under
// half a million buckets, narrow enough that a search's first page reads
// about a minute of traces (clickhouse_store.cpp, find_traces).
inline constexpr int kTraceBucketShift = 36;

}  // namespace sonde::store
