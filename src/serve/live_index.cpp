#include "serve/live_index.hpp"

#include <filesystem>

#include "store/sqlite_store.hpp"

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
  // One read transaction: the count and the rows come from one snapshot.
  if (std::string e = db_.exec("BEGIN"); !e.empty()) return e;
  std::string error;
  {
    store::SqliteStatement count(db_, "SELECT count(*), max(id) FROM traces WHERE id > ?1");
    if (count.ok()) {
      count.bind(1, after);
      if (count.step()) {
        out->count = static_cast<uint64_t>(count.int64(0));
        if (out->count > 0) out->cursor = count.int64(1);
      }
    }
    error = count.error();
    store::SqliteStatement rows(db_, std::string("SELECT id, client, ") +
                                         store::kTraceEntryColumns +
                                         " FROM traces WHERE id > ?1 ORDER BY id DESC LIMIT ?2");
    if (error.empty() && rows.ok()) {
      rows.bind(1, after);
      rows.bind(2, static_cast<int64_t>(limit));
      while (rows.step()) {
        IndexedTrace t;
        t.row = rows.int64(0);
        t.client = rows.int64(1);
        t.entry = store::read_trace_entry(rows, 2);
        out->newest.push_back(std::move(t));
      }
    }
    if (error.empty()) error = rows.error();
  }
  db_.exec("COMMIT");
  return error;
}

}  // namespace sonde::serve
