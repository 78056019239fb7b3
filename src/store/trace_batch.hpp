// Traces of the embedded index, many to a row (table `trace_batches`,
// docs/formats/store.md). One B-tree row, four index entries and an
// executions row per trace made SQLite 42 % of the collector's time on
// six-record traces (docs/collect.md, "Where the collector's time goes");
// a batch row holds up to kMaxBatchTraces traces in two zstd-compressed
// BLOBs (their catalogue entries, and their executions packed as
// execution_blob.hpp packs them) plus the bounds a search prunes on and a
// Bloom filter of their trace ids.
//
// A trace's row id, which orders ties and is the live view's cursor, is
// batch_row_id(batch id, index in the batch): it grows in insertion order.
//
// Entries BLOB, per trace, LEB128 varints (s: zigzag-signed):
//   flags (bit 0 valid, bit 1 a problem follows), s trace_id,
//   s (start - previous entry's start, the first against 0), s duration,
//   root operation name id, host name id, s thread_id, s parent_trace_id,
//   executions, failed, s client, bytes of its packed executions,
//   [problem: varint length, bytes]
// The executions BLOB is the traces' packed executions back to back, in
// entry order.
//
// Beside each row, two small tables let searches skip rows without
// unpacking them (docs/formats/store.md): `batch_roots`, the row's traces
// per root operation with their counts and bounds, and `batch_id_spans`,
// the row's trace ids as spans at most kIdSpanWidth wide.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/reconstruct/trace_catalog.hpp"
#include "store/sqlite_db.hpp"

struct ZSTD_CCtx_s;  // zstd.h

namespace sonde::store {

inline constexpr size_t kMaxBatchTraces = 4096;
inline constexpr int kBatchIndexBits = 20;  // > log2(kMaxBatchTraces)

inline int64_t batch_row_id(int64_t batch, size_t index) {
  return batch << kBatchIndexBits | static_cast<int64_t>(index);
}
inline int64_t batch_of_row(int64_t row) { return row >> kBatchIndexBits; }
inline size_t index_of_row(int64_t row) {
  return static_cast<size_t>(row & ((int64_t{1} << kBatchIndexBits) - 1));
}

// One trace of a batch as stored: strings are name ids (root, host) or
// views into the unpacked BLOB (problem).
struct BatchEntry {
  int64_t trace_id = 0;
  int64_t start = 0;
  int64_t duration = 0;
  uint64_t root = 0;  // names id
  uint64_t host = 0;  // names id
  int64_t thread_id = -1;
  int64_t parent_trace_id = -1;
  uint32_t executions = 0;
  uint32_t failed = 0;
  bool valid = true;
  std::string_view problem;
  int64_t client = 0;
  size_t executions_offset = 0;  // into the unpacked executions BLOB
  size_t executions_size = 0;
  // What the packed executions' first entry time is relative to: `start`
  // (flag bit 3, every entry the index writer wrote since 2026-12-07) or
  // 0 (rows before). add() takes either and flags which.
  int64_t executions_base = 0;
};

// How many traces a set holds and the bounds a search prunes on: of a
// whole batch row, of one root operation's traces in it, or of several
// roots' merged when a search matches more than one.
struct TraceBounds {
  int64_t traces = 0;
  int64_t invalid = 0;
  int64_t first_start = 0, last_start = 0;
  int64_t min_duration = 0, max_duration = 0;

  void add(int64_t start, int64_t duration, bool valid);
  void merge(const TraceBounds& other);
};

// The traces of one root operation in a batch row (table `batch_roots`):
// a search by root operation counts a row from these columns, or skips it.
struct BatchRootSummary {
  uint64_t root = 0;  // names id
  TraceBounds bounds;
};

// Trace ids lo..hi (inclusive) of a batch row, hi - lo <= kIdSpanWidth
// (table `batch_id_spans`). Bounding the width is what makes a lookup by id
// cheap: only spans whose lo lies within kIdSpanWidth below the id can hold
// it, one short index range however many rows there are. One process's ids
// come in blocks (the monitor hands each thread 4,096 at a time), so a row
// of many processes' traces has about one span per process.
struct TraceIdSpan {
  int64_t lo = 0;
  int64_t hi = 0;
};
inline constexpr uint64_t kIdSpanWidth = uint64_t{1} << 16;

// `ids` as the fewest greedy spans, in ascending order.
std::vector<TraceIdSpan> trace_id_spans(std::vector<int64_t> ids);
// The smallest lo a span holding `trace_id` can have.
int64_t lowest_span_start(int64_t trace_id);

// The columns of one `trace_batches` row.
struct BatchRow {
  TraceBounds all;  // over every trace
  int64_t valid_executions = 0;
  // Over the valid traces; meaningless unless traces > invalid.
  int64_t valid_first_start = 0, valid_last_start = 0;
  int64_t min_duration = 0, max_duration = 0;
  int64_t min_trace_id = 0, max_trace_id = 0;
  std::string entries;     // compressed
  std::string executions;  // compressed
  std::string bloom;
  std::vector<BatchRootSummary> roots;  // by root id
  std::vector<TraceIdSpan> id_spans;
};

class TraceBatchBuilder {
 public:
  // `packed_executions`: the trace's executions as pack_executions packs them.
  void add(const BatchEntry& entry, std::string_view packed_executions);
  size_t size() const { return trace_ids_.size(); }
  bool empty() const { return trace_ids_.empty(); }
  // The row of everything added since the last take(); starts a new batch.
  BatchRow take();

 private:
  struct CompressorFree {
    void operator()(ZSTD_CCtx_s* context) const;
  };
  // One zstd context for every row: ZSTD_compress made and freed one per
  // call (its allocation's page faults showed in the collector's profile).
  std::unique_ptr<ZSTD_CCtx_s, CompressorFree> compressor_;
  BatchRow row_;
  std::string entries_, executions_;
  std::string compressed_;                        // compress()'s output room, kept from row to row
  std::vector<int64_t> trace_ids_;                // one per trace added: the Bloom filter's input
  std::unordered_map<uint64_t, size_t> root_at_;  // root id -> its index in row_.roots
  int64_t previous_start_ = 0;
  int64_t previous_trace_id_ = 0;  // entries' ids are relative to it
};

// Unpacks a compressed entries BLOB. Returns "" or what is wrong.
std::string unpack_batch_entries(std::string_view compressed, std::string& raw,
                                 std::vector<BatchEntry>& out);
// Decompresses a BLOB written by TraceBatchBuilder. Returns "" or what is wrong.
std::string unpack_batch_blob(std::string_view compressed, std::string& raw);
// False if `trace_id` is certainly not in the batch.
bool batch_may_hold(std::string_view bloom, int64_t trace_id);

// The catalogue entry of a stored trace; `name_of` gives a names id's text.
analysis::TraceEntry to_trace_entry(const BatchEntry& e,
                                    const std::function<const std::string*(uint64_t)>& name_of);

// The index's `names` table by id, read as needed: a collector keeps
// adding names while readers look.
class IndexNames {
 public:
  const std::string* get(SqliteDb& db, uint64_t id);

 private:
  std::vector<std::string> names_{std::string()};  // by id; id 0 is ""
};

}  // namespace sonde::store
