// What the web UI (`sonde serve`) and the collector (`sonde collect`) agree
// on: a store of reconstructed traces that can be searched without scanning
// every record. Three implementations share this interface:
//   - an in-memory store built by reading a log (native or Kieker),
//   - the embedded default: native logs plus an SQLite index (collector),
//   - ClickHouse, for more than one machine holds.
// The same query must give the same answer from every implementation; the
// store tests check that.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/trace_catalog.hpp"
#include "store/reduced_query.hpp"

namespace sonde::store {

// A trace search: the catalogue's filter plus a time window and paging.
struct TraceQuery {
  analysis::TraceFilter filter;
  int64_t from_ns = std::numeric_limits<int64_t>::min();  // trace start >= from_ns
  int64_t to_ns = std::numeric_limits<int64_t>::max();    // trace start <= to_ns
  analysis::TraceOrder order = analysis::TraceOrder::kStart;
  size_t limit = 100;
  size_t offset = 0;
  // How many traces a store may unpack only to count the matches beyond
  // the page before it counts the rest from a sample of them (the page is
  // always exact); 0: count every match. See TraceQueryResult.
  uint64_t exact_count_traces = 1'000'000;
};

struct TraceQueryResult {
  std::vector<analysis::TraceEntry> entries;  // at most `limit`, after `offset`
  uint64_t matched = 0;                       // all traces that pass the query
  // True when `matched` is an estimate: the embedded store, past
  // exact_count_traces, unpacks an even sample of the rows it would read
  // only to count, and scales what the sample matched to the rest.
  bool matched_estimated = false;
};

// One execution of a stored trace; owns its strings (unlike
// analysis::Execution, whose views die with the reconstructor's pool).
struct StoredExecution {
  std::string operation;
  std::string component;
  std::string host;
  int64_t tin = 0;
  int64_t tout = 0;  // -1: exit never seen
  int32_t eoi = 0;
  int32_t ess = 0;
  bool failed = false;
  std::string cause;
};

struct StoredTrace {
  analysis::TraceEntry entry;
  std::vector<StoredExecution> executions;  // eoi order
};

// Per-operation response-time statistics (inclusive), nanoseconds.
struct OperationStats {
  std::string operation;
  uint64_t count = 0;
  uint64_t failed = 0;
  double mean = 0;
  int64_t min = 0;
  int64_t max = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

// A caller -> callee edge of the operation dependency graph.
struct CallEdge {
  std::string caller;  // "" for the entry of a trace
  std::string callee;
  uint64_t calls = 0;
};

struct StoreInfo {
  uint64_t traces = 0;          // valid traces stored
  uint64_t invalid_traces = 0;  // incomplete or inconsistent, stored with their reason
  uint64_t executions = 0;
  int64_t first_start = 0;  // earliest trace start, ns since the epoch (0: empty)
  int64_t last_start = 0;
  std::vector<std::string> hosts;
  // `sonde collect --reduce`: rows of `reduced_traces`, and the valid traces
  // they stand for (not counted in `traces`).
  uint64_t reduced_traces = 0;
  uint64_t reduced_from_traces = 0;
  // Grows whenever the store changes (a live collector): clients poll it.
  uint64_t generation = 0;
};

class TraceStore {
 public:
  virtual ~TraceStore() = default;
  virtual StoreInfo info() = 0;
  virtual TraceQueryResult find_traces(const TraceQuery& query) = 0;
  // Every stored trace with this id (ids from different processes can clash).
  virtual std::vector<StoredTrace> trace(int64_t trace_id) = 0;
  virtual std::vector<OperationStats> operations() = 0;
  virtual std::vector<CallEdge> call_edges() = 0;
  // Reduced traces (reduced_query.hpp). Only the embedded SQLite store holds
  // them; the others answer `supported` = false.
  virtual ReducedQueryResult find_reduced(const ReducedQuery& query);
  virtual ReducedTraceLookup reduced_trace(int64_t id);
};

// Copies an analysis trace into owned storage.
StoredTrace to_stored(const analysis::Trace& trace);

}  // namespace sonde::store
