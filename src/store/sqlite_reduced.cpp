// SqliteStore's reader of `reduced_traces` (sonde collect --reduce): the
// search over its columns and one row with its call positions unpacked
// from the BLOB (execution_blob.hpp).
#include <limits>

#include "store/execution_blob.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {

namespace {

constexpr const char* kReducedEntryColumns =
    "id, first_trace_id, root_operation, host, first_start_ns, last_start_ns, traces, "
    "failed_traces, mean_ns, min_ns, max_ns";

ReducedEntry read_reduced_entry(const SqliteStatement& s) {
  ReducedEntry e;
  e.id = s.int64(0);
  e.first_trace_id = s.int64(1);
  e.root_operation = s.text(2);
  e.host = s.text(3);
  e.first_start = s.int64(4);
  e.last_start = s.int64(5);
  e.traces = static_cast<uint64_t>(s.int64(6));
  e.failed_traces = static_cast<uint64_t>(s.int64(7));
  e.mean_duration = s.real(8);
  e.min_duration = s.int64(9);
  e.max_duration = s.int64(10);
  return e;
}

int64_t reduced_bound(uint64_t n) {
  return n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(n);
}

}  // namespace

ReducedQueryResult SqliteStore::find_reduced(const ReducedQuery& q) {
  std::lock_guard lock(mutex_);
  std::string where = " WHERE first_start_ns >= ?1 AND first_start_ns <= ?2 AND traces >= ?3";
  if (!q.operation.empty()) where += " AND instr(root_operation, ?4) > 0";
  if (!q.host.empty()) where += " AND host = ?5";
  const auto bind_filter = [&](SqliteStatement& s) {
    s.bind(1, q.from_ns);
    s.bind(2, q.to_ns);
    s.bind(3, reduced_bound(q.min_count));
    if (!q.operation.empty()) s.bind(4, std::string_view(q.operation));
    if (!q.host.empty()) s.bind(5, std::string_view(q.host));
  };
  const std::string order = q.order == ReducedOrder::kCount
                                ? " ORDER BY traces DESC, first_start_ns, id"
                                : " ORDER BY first_start_ns, id";
  SqliteReadSnapshot snapshot(db_);
  ReducedQueryResult result;
  SqliteStatement count(db_, "SELECT COUNT(*) FROM reduced_traces" + where);
  if (count.ok()) {
    bind_filter(count);
    if (count.step()) result.matched = static_cast<uint64_t>(count.int64(0));
  }
  if (!count.error().empty()) {
    result.error = count.error();
    return result;
  }
  SqliteStatement page(db_, std::string("SELECT ") + kReducedEntryColumns + " FROM reduced_traces" +
                                where + order + " LIMIT ?6 OFFSET ?7");
  if (page.ok()) {
    bind_filter(page);
    page.bind(6, reduced_bound(q.limit));
    page.bind(7, reduced_bound(q.offset));
    while (page.step()) result.entries.push_back(read_reduced_entry(page));
  }
  result.error = page.error();
  return result;
}

ReducedTraceLookup SqliteStore::reduced_trace(int64_t id) {
  std::lock_guard lock(mutex_);
  SqliteReadSnapshot snapshot(db_);
  ReducedTraceLookup result;
  SqliteStatement find(db_, std::string("SELECT ") + kReducedEntryColumns +
                                ", data FROM reduced_traces WHERE id = ?1");
  if (find.ok()) {
    find.bind(1, id);
    if (find.step()) {
      StoredReducedTrace t{read_reduced_entry(find), {}};
      const std::string problem = unpack_reduced_executions(
          find.blob(11), [this](uint64_t name_id) { return names_.get(db_, name_id); },
          t.executions);
      if (!problem.empty()) {
        result.error = "call positions of reduced trace row " + std::to_string(id) + ": " + problem;
        return result;
      }
      result.trace = std::move(t);
    }
  }
  result.error = find.error();
  return result;
}

}  // namespace sonde::store
