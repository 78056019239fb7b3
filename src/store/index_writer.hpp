// Writes reconstructed traces into DIR/index.sqlite (schema in
// index_schema.cpp, docs/formats/store.md): traces many to a row
// (trace_batch.hpp), with their executions (so a trace can be shown
// without reading the logs; execution_blob.hpp), and
// per-operation aggregates and call edges kept up to date on every commit.
//
// Inserts are batched in transactions; commit() makes everything added so
// far visible to readers (WAL mode: readers never block the writer and see
// only committed batches). Aggregates live in memory with bounded size per
// operation (DurationAccumulator) and are rewritten for the operations a
// batch touched. Reopening an existing index appends to it: the aggregates
// are loaded as the last clean close saved them (`operation_state`), or,
// after a crash or by an older writer, rebuilt from the stored executions.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/model/duration_accumulator.hpp"
#include "analysis/model/trace_model.hpp"
#include "format/address_cache.hpp"
#include "store/index_sink.hpp"
#include "store/sqlite_db.hpp"
#include "store/trace_batch.hpp"

namespace sonde::store {

class IndexWriter final : public TraceIndex {
 public:
  // Traces per transaction before commit() happens by itself. The owner
  // commits for visibility (the collector every 0.5 s); this only bounds a
  // transaction's size. A multiple of kMaxBatchTraces, because a commit
  // also cuts the batch row: at 5,000 every other row held 904 traces, and
  // the collector, at 670,000 traces a second, committed 134 times a
  // second, each rewriting every operation's statistics.
  explicit IndexWriter(size_t batch_traces = 16 * kMaxBatchTraces) : batch_traces_(batch_traces) {}
  ~IndexWriter() override;
  IndexWriter(const IndexWriter&) = delete;
  IndexWriter& operator=(const IndexWriter&) = delete;

  // Creates DIR (if needed) and opens or creates DIR/index.sqlite.
  // Returns "" or an error naming the path and the reason.
  std::string open(const std::string& dir);

  // `client` tags the trace with the connection it came from (0: a log).
  void add(const analysis::Trace& trace, int64_t client) override;
  void add_invalid(const analysis::InvalidTrace& trace, int64_t client) override;
  void put_client(const ClientRecord& client) override;
  void count(const analysis::Trace& trace) override;
  void add_reduced(const analysis::ReducedTrace& trace, int64_t client) override;
  // The lowest client id not used in this index yet (ids stay unique when
  // a collector appends to an existing directory).
  int64_t next_client_id() const override { return next_client_id_; }

  // Writes the batch and the aggregates it changed, and commits.
  // Returns "" or the error (which also stays in error()).
  std::string commit() override;
  // Final commit.
  std::string finish() override;

  // The first write error, or "": after one, nothing more is written.
  const std::string& error() const override { return error_; }
  uint64_t traces() const { return traces_; }
  uint64_t invalid_traces() const { return invalid_traces_; }

 private:
  struct OperationAggregate {
    analysis::DurationAccumulator inclusive;
    uint64_t failed = 0;
    bool dirty = false;
  };
  struct EdgeAggregate {
    uint64_t calls = 0;
    bool dirty = false;
  };
  bool begin();
  void write_batch();
  void insert(const analysis::Trace& trace, bool valid, const std::string& problem, int64_t client);
  // `operation_ids`: each execution's operation name id, one per execution,
  // as insert() packed them (so the aggregates need no second lookup).
  void aggregate(const analysis::Trace& trace, const std::vector<uint64_t>& operation_ids);
  void fail(const std::string& message);
  // Runs an INSERT/UPDATE and resets it; false (and error() set) if it failed.
  bool write(SqliteStatement& s);
  std::string load_existing();
  // The operations' statistics as finish() saved them, if nothing was
  // committed since; false: rebuild them from the executions.
  bool load_saved_statistics(uint64_t generation);
  void save_statistics();
  uint64_t name_id(std::string_view name);
  uint64_t name_id_or_empty(std::string_view name);
  void remember_name(std::string text, uint64_t id);  // one known to the `names` table
  std::string_view name_text(uint64_t id) const;      // "" for 0 or an unknown id

  size_t batch_traces_;
  SqliteDb db_;
  SqliteStatement insert_batch_, insert_root_, insert_id_span_, insert_host_, insert_name_,
      insert_reduced_, upsert_operation_, upsert_edge_, upsert_client_, set_meta_, insert_state_;
  TraceBatchBuilder batch_;  // traces not yet in a row
  bool in_transaction_ = false;
  bool saving_statistics_ = false;  // finish()'s commit also saves them
  bool opened_ = false;             // open() succeeded: the aggregates are whole
  size_t pending_ = 0;
  uint64_t generation_ = 0;
  uint64_t traces_ = 0;
  uint64_t invalid_traces_ = 0;
  int64_t next_client_id_ = 1;
  std::string error_;
  // Every execution looks up three names and its operation's and edge's
  // aggregates. The aggregates are keyed by the names' ids, and a name is
  // found first by where its text lies (format::AddressCache): a trace's
  // names are views into its client's interned strings.
  // (Ordered maps of strings were a tenth of the collector's time, hashing
  // every name of every execution most of what was left of it;
  // docs/PERFORMANCE.md.)
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Ids of the `names` table; id 0 is "".
  std::unordered_map<std::string, uint64_t, NameHash, std::equal_to<>> names_;
  std::vector<const std::string*> name_texts_;  // by id, into names_' keys (stable)
  format::AddressCache<uint64_t, 4096> name_cache_;
  std::unordered_map<uint64_t, OperationAggregate> operations_;  // by operation name id
  struct EdgeHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
      return std::hash<uint64_t>{}(p.first * 0x9e3779b97f4a7c15ULL ^ p.second);
    }
  };
  // (caller, callee) name ids; caller 0: a trace's entry.
  std::unordered_map<std::pair<uint64_t, uint64_t>, EdgeAggregate, EdgeHash> edges_;
  // aggregate() looks up two aggregates per execution, mostly the same few:
  // direct-mapped caches in front of both tables (their elements never move
  // or go, load_saved_statistics() aside, which clears the caches).
  static constexpr size_t kAggregateCacheSlots = 256;
  struct CachedOperation {
    uint64_t id = 0;
    OperationAggregate* aggregate = nullptr;
  };
  struct CachedEdge {
    uint64_t caller = 0, callee = 0;
    EdgeAggregate* aggregate = nullptr;
  };
  std::array<CachedOperation, kAggregateCacheSlots> operation_cache_{};
  std::array<CachedEdge, kAggregateCacheSlots> edge_cache_{};
  OperationAggregate& operation_aggregate(uint64_t id);
  EdgeAggregate& edge_aggregate(uint64_t caller, uint64_t callee);
  std::string packed_;  // reused buffer for one trace's executions
  static constexpr size_t kLargestKeptPackedBytes = size_t{1} << 20;
  std::vector<uint64_t> caller_stack_;   // reused by aggregate()
  std::vector<uint64_t> operation_ids_;  // the last packed trace's, reused
  std::unordered_set<std::string, NameHash, std::equal_to<>> hosts_;  // in `hosts`
  // By name id: hosts known to be in hosts_, so that a trace's host costs
  // an index instead of hashing its text (insert(), per trace).
  std::vector<bool> host_ids_known_;
  uint64_t next_name_id_ = 1;
};

}  // namespace sonde::store
