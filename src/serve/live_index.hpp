// The one query the live view needs that TraceStore has no method for: the
// traces a running collector indexed after a cursor, newest first. The
// cursor is a trace's row id in DIR/index.sqlite (its batch row and its
// place there, store/trace_batch.hpp; docs/formats/store.md), which only
// grows while a collector appends, so "after cursor C" is exactly "stored
// since the poll that returned C".
// Opened read-only like SqliteStore (WAL: never blocks the collector).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_catalog.hpp"
#include "store/sqlite_db.hpp"
#include "store/trace_batch.hpp"

namespace sonde::serve {

struct IndexedTrace {
  int64_t row = 0;     // the cursor value of this trace
  int64_t client = 0;  // the collector's client id (collect-stats.json `id`)
  analysis::TraceEntry entry;
};

struct NewTraces {
  uint64_t count = 0;                // traces after the cursor (all of them)
  int64_t cursor = 0;                // the largest row id seen (the next `after`)
  std::vector<IndexedTrace> newest;  // at most `limit`, newest first
};

class LiveIndex {
 public:
  explicit LiveIndex(std::string index_file);
  // Fills `out`; returns "" or an error naming the file. The file may not
  // exist yet (a collector starting): then nothing is new, no error.
  std::string traces_after(int64_t after, size_t limit, NewTraces* out);

 private:
  std::string index_file_;
  std::mutex mutex_;
  store::SqliteDb db_;
  store::IndexNames names_;
};

}  // namespace sonde::serve
