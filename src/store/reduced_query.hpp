// Reduced traces read back (`sonde collect --reduce` stores one row per
// shape, window and connection instead of every trace; table
// `reduced_traces`, docs/formats/store.md): the search and lookup types of
// TraceStore::find_reduced and TraceStore::reduced_trace.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_reducer.hpp"

namespace sonde::store {

enum class ReducedOrder {
  kCount,  // most traces first (ties: earliest window, then row id)
  kStart,  // earliest window first (ties: row id)
};

struct ReducedQuery {
  std::string operation;                                  // root-operation substring ("" = any)
  std::string host;                                       // exact host ("" = any)
  int64_t from_ns = std::numeric_limits<int64_t>::min();  // first_start >= from_ns
  int64_t to_ns = std::numeric_limits<int64_t>::max();    // first_start <= to_ns
  uint64_t min_count = 0;                                 // traces >= min_count
  ReducedOrder order = ReducedOrder::kCount;
  size_t limit = 100;
  size_t offset = 0;
};

// One row of `reduced_traces` without its call positions.
struct ReducedEntry {
  int64_t id = 0;  // row id: the key of reduced_trace()
  int64_t first_trace_id = -1;
  std::string root_operation;
  std::string host;
  int64_t first_start = 0;
  int64_t last_start = 0;
  uint64_t traces = 0;
  uint64_t failed_traces = 0;
  double mean_duration = 0;
  int64_t min_duration = 0;
  int64_t max_duration = 0;
};

// What the stores that never hold reduced traces (in memory, ClickHouse,
// which refuses --reduce) answer: `supported` false.
struct ReducedQueryResult {
  std::vector<ReducedEntry> entries;  // at most `limit`, after `offset`
  uint64_t matched = 0;
  bool supported = true;
  std::string error;  // "" or why the store could not answer
};

struct StoredReducedTrace {
  ReducedEntry entry;
  std::vector<analysis::ReducedExecution> executions;  // eoi order
};

struct ReducedTraceLookup {
  std::optional<StoredReducedTrace> trace;  // empty: no such row (or an error)
  bool supported = true;
  // "" or why the row cannot be read, e.g. a damaged BLOB, naming the row
  // and the byte offset.
  std::string error;
};

}  // namespace sonde::store
