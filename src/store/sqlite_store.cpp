#include "store/sqlite_store.hpp"

#include <algorithm>
#include <filesystem>

#include "store/execution_blob.hpp"
#include "store/index_schema.hpp"

namespace sonde::store {

namespace fs = std::filesystem;

namespace {

const std::string kTraceColumns = std::string("id, ") + kTraceEntryColumns;

// Column 0 is the row id.
analysis::TraceEntry read_entry(const SqliteStatement& s) { return read_trace_entry(s, 1); }

int64_t clamp_to_int64(size_t n) {
  return n > static_cast<size_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(n);
}

}  // namespace

const char* const kTraceEntryColumns =
    "trace_id, root_operation, start_ns, duration_ns, host, thread_id, parent_trace_id, "
    "executions, failed, valid, problem";

analysis::TraceEntry read_trace_entry(const SqliteStatement& s, int first) {
  analysis::TraceEntry e;
  e.trace_id = s.int64(first);
  e.root_operation = s.text(first + 1);
  e.start = s.int64(first + 2);
  e.duration = s.int64(first + 3);
  e.host = s.text(first + 4);
  e.thread_id = s.int64(first + 5);
  e.parent_trace_id = s.int64(first + 6);
  e.executions = static_cast<uint32_t>(s.int64(first + 7));
  e.failed = static_cast<uint32_t>(s.int64(first + 8));
  e.valid = s.int64(first + 9) != 0;
  e.problem = s.text(first + 10);
  return e;
}

std::unique_ptr<SqliteStore> SqliteStore::open(const std::string& path, std::string* error) {
  std::error_code ec;
  const std::string file =
      fs::is_directory(path, ec) ? (fs::path(path) / kIndexFileName).string() : path;
  if (!fs::exists(file, ec)) {
    *error = file + ": no such file (not a store written by `sonde collect` or `sonde index`)";
    return nullptr;
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore());
  if (std::string e = store->db_.open(file, SQLITE_OPEN_READONLY); !e.empty()) {
    *error = "cannot open the store " + e;
    return nullptr;
  }
  SqliteStatement version(store->db_, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.ok()) {
    *error = file + ": not a sonde index (" + version.error() + ")";
    return nullptr;
  }
  if (!version.step()) {
    *error = file + ": not a sonde index (no schema version)";
    return nullptr;
  }
  if (version.text(0) != std::to_string(kIndexSchemaVersion)) {
    *error = file + ": index schema version " + version.text(0) + ", this sonde reads " +
             std::to_string(kIndexSchemaVersion) + " (rebuild it from the logs: sonde index)";
    return nullptr;
  }
  return store;
}

std::string SqliteStore::last_error() {
  std::lock_guard lock(mutex_);
  return last_error_;
}

StoreInfo SqliteStore::info() {
  std::lock_guard lock(mutex_);
  SqliteReadSnapshot snapshot(db_);
  StoreInfo info;
  // Executions and the time range of valid traces, as the in-memory store.
  SqliteStatement totals(db_,
                         "SELECT COALESCE(SUM(valid), 0), COALESCE(SUM(1 - valid), 0), "
                         "COALESCE(SUM(CASE WHEN valid = 1 THEN executions END), 0), "
                         "COALESCE(MIN(CASE WHEN valid = 1 THEN start_ns END), 0), "
                         "COALESCE(MAX(CASE WHEN valid = 1 THEN start_ns END), 0) FROM traces");
  if (totals.ok() && totals.step()) {
    info.traces = static_cast<uint64_t>(totals.int64(0));
    info.invalid_traces = static_cast<uint64_t>(totals.int64(1));
    info.executions = static_cast<uint64_t>(totals.int64(2));
    info.first_start = totals.int64(3);
    info.last_start = totals.int64(4);
  }
  // Reduced traces stand for valid traces: they widen the time range and
  // add their hosts.
  SqliteStatement reduced(db_,
                          "SELECT COUNT(*), COALESCE(SUM(traces), 0), MIN(first_start_ns), "
                          "MAX(last_start_ns) FROM reduced_traces");
  if (reduced.ok() && reduced.step()) {
    info.reduced_traces = static_cast<uint64_t>(reduced.int64(0));
    info.reduced_from_traces = static_cast<uint64_t>(reduced.int64(1));
    if (info.reduced_traces > 0) {
      const bool none = info.traces == 0;
      info.first_start = none ? reduced.int64(2) : std::min(info.first_start, reduced.int64(2));
      info.last_start = none ? reduced.int64(3) : std::max(info.last_start, reduced.int64(3));
    }
  }
  SqliteStatement hosts(db_,
                        "SELECT host FROM traces WHERE host <> '' UNION "
                        "SELECT host FROM reduced_traces WHERE host <> '' ORDER BY host");
  while (hosts.ok() && hosts.step()) info.hosts.push_back(hosts.text(0));
  SqliteStatement generation(db_, "SELECT value FROM meta WHERE key = 'generation'");
  if (generation.ok() && generation.step()) info.generation = std::stoull(generation.text(0));
  last_error_ = !totals.error().empty()    ? totals.error()
                : !reduced.error().empty() ? reduced.error()
                                           : hosts.error();
  return info;
}

TraceQueryResult SqliteStore::find_traces(const TraceQuery& q) {
  std::lock_guard lock(mutex_);
  // Same semantics as TraceCatalog (root-operation substring, exact host,
  // inclusive duration bounds), plus the time window on the trace start.
  std::string where = " WHERE start_ns >= ?1 AND start_ns <= ?2 AND duration_ns >= ?3";
  const analysis::TraceFilter& f = q.filter;
  if (f.only_invalid) {
    where += " AND valid = 0";
  } else if (!f.include_invalid) {
    where += " AND valid = 1";
  }
  if (f.max_duration >= 0) where += " AND duration_ns <= ?4";
  if (!f.operation.empty()) where += " AND instr(root_operation, ?5) > 0";
  if (!f.host.empty()) where += " AND host = ?6";
  if (f.only_failed) where += " AND failed > 0";
  auto bind_filter = [&](SqliteStatement& s) {
    s.bind(1, q.from_ns);
    s.bind(2, q.to_ns);
    s.bind(3, f.min_duration);
    if (f.max_duration >= 0) s.bind(4, f.max_duration);
    if (!f.operation.empty()) s.bind(5, std::string_view(f.operation));
    if (!f.host.empty()) s.bind(6, std::string_view(f.host));
  };
  const std::string order = q.order == analysis::TraceOrder::kLongest
                                ? " ORDER BY duration_ns DESC, trace_id, id"
                                : " ORDER BY start_ns, trace_id, id";

  SqliteReadSnapshot snapshot(db_);
  TraceQueryResult result;
  SqliteStatement count(db_, "SELECT COUNT(*) FROM traces" + where);
  if (!count.ok()) {
    last_error_ = count.error();
    return result;
  }
  bind_filter(count);
  if (count.step()) result.matched = static_cast<uint64_t>(count.int64(0));
  SqliteStatement page(
      db_, "SELECT " + kTraceColumns + " FROM traces" + where + order + " LIMIT ?7 OFFSET ?8");
  if (!page.ok()) {
    last_error_ = page.error();
    return result;
  }
  bind_filter(page);
  page.bind(7, clamp_to_int64(q.limit));
  page.bind(8, clamp_to_int64(q.offset));
  while (page.step()) result.entries.push_back(read_entry(page));
  last_error_ = !count.error().empty() ? count.error() : page.error();
  return result;
}

std::vector<StoredTrace> SqliteStore::trace(int64_t trace_id) {
  std::lock_guard lock(mutex_);
  SqliteReadSnapshot snapshot(db_);
  std::vector<StoredTrace> traces;
  std::vector<int64_t> rows;
  SqliteStatement find(
      db_, "SELECT " + kTraceColumns + " FROM traces WHERE trace_id = ?1 ORDER BY start_ns, id");
  find.bind(1, trace_id);
  while (find.ok() && find.step()) {
    rows.push_back(find.int64(0));
    traces.push_back({read_entry(find), {}});
  }
  SqliteStatement executions(db_, "SELECT data FROM trace_executions WHERE trace = ?1");
  std::string problem;
  for (size_t i = 0; i < rows.size() && executions.ok() && problem.empty(); ++i) {
    executions.bind(1, rows[i]);
    if (executions.step()) {
      problem = unpack_executions(
          executions.blob(0), [this](uint64_t id) { return name(id); }, traces[i].executions);
      if (!problem.empty()) {
        problem = "executions of trace row " + std::to_string(rows[i]) + ": " + problem;
      }
    }
    executions.reset();
  }
  last_error_ = !find.error().empty()         ? find.error()
                : !executions.error().empty() ? executions.error()
                                              : problem;
  return traces;
}

const std::string* SqliteStore::name(uint64_t id) {
  // Names only grow (a collector may add some after we last looked): read
  // the new ones when an id is past what we have.
  if (id >= names_.size()) {
    SqliteStatement more(db_, "SELECT id, text FROM names WHERE id >= ?1 ORDER BY id");
    more.bind(1, static_cast<int64_t>(names_.size()));
    while (more.ok() && more.step()) {
      const auto at = static_cast<uint64_t>(more.int64(0));
      if (at >= (uint64_t{1} << 32)) break;  // not an id this writer makes: stays unknown
      if (names_.size() <= at) names_.resize(at + 1);
      names_[at] = more.text(1);
    }
  }
  return id < names_.size() ? &names_[id] : nullptr;
}

// Largest total inclusive time first, as `sonde summary` and the in-memory store.
std::vector<OperationStats> SqliteStore::operations() {
  std::lock_guard lock(mutex_);
  std::vector<OperationStats> out;
  SqliteStatement s(db_,
                    "SELECT operation, count, failed, mean, min, max, p50, p90, p95, p99 "
                    "FROM operations ORDER BY total DESC, operation");
  while (s.ok() && s.step()) {
    OperationStats o;
    o.operation = s.text(0);
    o.count = static_cast<uint64_t>(s.int64(1));
    o.failed = static_cast<uint64_t>(s.int64(2));
    o.mean = s.real(3);
    o.min = s.int64(4);
    o.max = s.int64(5);
    o.p50 = s.real(6);
    o.p90 = s.real(7);
    o.p95 = s.real(8);
    o.p99 = s.real(9);
    out.push_back(std::move(o));
  }
  last_error_ = s.error();
  return out;
}

std::vector<CallEdge> SqliteStore::call_edges() {
  std::lock_guard lock(mutex_);
  std::vector<CallEdge> out;
  SqliteStatement s(db_, "SELECT caller, callee, calls FROM call_edges ORDER BY caller, callee");
  while (s.ok() && s.step()) {
    out.push_back({s.text(0), s.text(1), static_cast<uint64_t>(s.int64(2))});
  }
  last_error_ = s.error();
  return out;
}

}  // namespace sonde::store
