// The in-memory TraceStore behind `sonde serve LOG`: reads a whole log (any
// kind format::read_log understands: native, Kieker directory, OPEN.xtrace),
// reconstructs its traces the way `sonde traces` does and keeps them, with
// per-operation statistics and the operation call edges, in memory.
//
// refresh() re-reads the log when its files changed (a collector still
// writing): the new content replaces the old atomically and `generation`
// grows, so polling clients see the change. Queries may run concurrently
// with each other and with refresh().
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/trace_store.hpp"

namespace sonde::store {

// What reading the log reported (errors name the file and reason).
struct MemoryStoreLoad {
  bool ok = true;  // false: nothing could be read
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

class MemoryStore final : public TraceStore {
 public:
  // Reads `log` now; check load() for what went wrong.
  explicit MemoryStore(std::string log);

  const MemoryStoreLoad& load() const { return load_; }

  // Re-reads the log if a file in it changed size or time since the last
  // read; returns true if it did.
  bool refresh();

  StoreInfo info() override;
  TraceQueryResult find_traces(const TraceQuery& query) override;
  std::vector<StoredTrace> trace(int64_t trace_id) override;
  std::vector<OperationStats> operations() override;
  std::vector<CallEdge> call_edges() override;

  struct Snapshot;  // defined in the .cpp

 private:
  std::shared_ptr<const Snapshot> snapshot();

  std::string log_;
  MemoryStoreLoad load_;
  std::mutex mutex_;  // guards snapshot_ and load_ updates
  std::shared_ptr<const Snapshot> snapshot_;
  uint64_t generation_ = 0;
  std::string signature_;  // sizes and times of the log's files at the last read
};

// Whether `entry` passes `query`'s filter and time window (shared by the
// stores that filter in memory, so they all agree with TraceCatalog).
bool matches(const analysis::TraceEntry& entry, const TraceQuery& query);

}  // namespace sonde::store
