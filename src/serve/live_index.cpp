#include "serve/live_index.hpp"

#include <filesystem>

#include "store/trace_batch.hpp"

namespace sonde::serve {

LiveIndex::LiveIndex(std::string index_file) : index_file_(std::move(index_file)) {}

std::string LiveIndex::traces_after(int64_t after, size_t limit, NewTraces* out) {
  std::lock_guard lock(mutex_);
  *out = NewTraces{};
  out->cursor = after;
  if (!db_.is_open()) {
    std::error_code ec;
    if (!std::filesystem::exists(index_file_, ec)) return "";
    if (std::string e = db_.open(index_file_, SQLITE_OPEN_READONLY); !e.empty()) return e;
  }
  // A cursor names the batch row and the trace in it seen last; batch
  // rows never change once written (store/trace_batch.hpp).
  const int64_t batch = after > 0 ? store::batch_of_row(after) : 0;
  const size_t seen_in_batch = after > 0 ? store::index_of_row(after) + 1 : 0;
  // One read transaction: the count and the rows come from one snapshot.
  if (std::string e = db_.exec("BEGIN"); !e.empty()) return e;
  std::string error;
  {
    store::SqliteStatement counts(db_,
                                  "SELECT id, traces FROM trace_batches WHERE id >= ?1 "
                                  "ORDER BY id DESC");
    store::SqliteStatement rows(db_,
                                "SELECT id, entries FROM trace_batches WHERE id >= ?1 "
                                "ORDER BY id DESC");
    if (counts.ok()) {
      counts.bind(1, batch);
      bool newest = true;
      while (counts.step()) {
        const int64_t id = counts.int64(0);
        const auto traces = static_cast<uint64_t>(counts.int64(1));
        if (newest && traces > 0) out->cursor = store::batch_row_id(id, traces - 1);
        newest = false;
        out->count += id == batch ? traces - std::min<uint64_t>(traces, seen_in_batch) : traces;
      }
      if (out->count == 0) out->cursor = after;
    }
    error = counts.error();
    std::vector<store::BatchEntry> entries;
    std::string raw;
    const auto name_of = [this](uint64_t id) { return names_.get(db_, id); };
    if (error.empty() && rows.ok()) {
      rows.bind(1, batch);
      while (out->newest.size() < limit && rows.step()) {
        const int64_t id = rows.int64(0);
        if (std::string e = store::unpack_batch_entries(rows.blob(1), raw, entries); !e.empty()) {
          error = index_file_ + ": batch row " + std::to_string(id) + ": " + e;
          break;
        }
        for (size_t i = entries.size(); i-- > 0 && out->newest.size() < limit;) {
          const int64_t row = store::batch_row_id(id, i);
          if (row <= after) break;
          IndexedTrace t;
          t.row = row;
          t.client = entries[i].client;
          t.entry = store::to_trace_entry(entries[i], name_of);
          out->newest.push_back(std::move(t));
        }
      }
    }
    if (error.empty()) error = rows.error();
  }
  db_.exec("COMMIT");
  return error;
}

}  // namespace sonde::serve
