#include "store/sqlite_store.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "store/execution_blob.hpp"
#include "store/index_schema.hpp"
#include "store/trace_batch.hpp"

namespace sonde::store {

namespace fs = std::filesystem;

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
                         "SELECT COALESCE(SUM(traces - invalid), 0), COALESCE(SUM(invalid), 0), "
                         "COALESCE(SUM(valid_executions), 0), "
                         "COALESCE(MIN(valid_first_start_ns), 0), "
                         "COALESCE(MAX(valid_last_start_ns), 0) FROM trace_batches");
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
                        "SELECT name FROM hosts WHERE name <> '' UNION "
                        "SELECT host FROM reduced_traces WHERE host <> '' ORDER BY host");
  while (hosts.ok() && hosts.step()) info.hosts.push_back(hosts.text(0));
  SqliteStatement generation(db_, "SELECT value FROM meta WHERE key = 'generation'");
  if (generation.ok() && generation.step()) info.generation = std::stoull(generation.text(0));
  last_error_ = !totals.error().empty()    ? totals.error()
                : !reduced.error().empty() ? reduced.error()
                                           : hosts.error();
  return info;
}

namespace {

// A trace that passes a query, with what orders it.
struct Candidate {
  int64_t first;  // start, or -duration for the longest first
  int64_t trace_id;
  int64_t row;
  BatchEntry entry;     // its problem view is not kept: see `problem`
  std::string problem;  // owned: the unpacked batch is reused
};

bool before(const Candidate& a, const Candidate& b) {
  return std::tie(a.first, a.trace_id, a.row) < std::tie(b.first, b.trace_id, b.row);
}

// What a batch row holds that a query may want, from columns alone: the
// whole row's traces, or, for a search by root operation, the traces of its
// matching roots (`batch_roots`).
struct RowBounds : TraceBounds {
  int64_t batch = 0;
};

// The bound columns, in RowBounds' order after the batch id, and the
// conditions a row's bounds must meet to hold a matching trace.
constexpr const char* kBoundColumns =
    "traces, invalid, first_start_ns, last_start_ns, min_duration_ns, max_duration_ns";

std::string bounds_where(const analysis::TraceFilter& f, bool with_validity) {
  std::string where = " last_start_ns >= ?1 AND first_start_ns <= ?2 AND max_duration_ns >= ?3";
  if (f.max_duration >= 0) where += " AND min_duration_ns <= ?4";
  if (!with_validity) return where;
  if (f.only_invalid) return where + " AND invalid > 0";
  if (!f.include_invalid) return where + " AND traces > invalid";
  return where;
}

void bind_bounds(SqliteStatement& s, const TraceQuery& q) {
  s.bind(1, q.from_ns);
  s.bind(2, q.to_ns);
  s.bind(3, q.filter.min_duration);
  if (q.filter.max_duration >= 0) s.bind(4, q.filter.max_duration);
}

RowBounds read_bounds(const SqliteStatement& s) {
  RowBounds r;
  r.batch = s.int64(0);
  static_cast<TraceBounds&>(r) = {s.int64(1), s.int64(2), s.int64(3),
                                  s.int64(4), s.int64(5), s.int64(6)};
  return r;
}

std::vector<uint64_t> matching_roots(SqliteDb& db, const std::string& operation,
                                     std::string& error) {
  // Root operations only: names that root no trace have no batch_roots row.
  // As BLOBs, instr compares bytes, as std::string::find does (as text it
  // steps by UTF-8 characters, which a name need not be).
  std::vector<uint64_t> roots;
  SqliteStatement s(db,
                    "SELECT id FROM names WHERE instr(CAST(text AS BLOB), ?1) > 0 AND "
                    "EXISTS (SELECT 1 FROM batch_roots WHERE root = names.id)");
  s.bind_blob(1, operation);
  while (s.ok() && s.step()) roots.push_back(static_cast<uint64_t>(s.int64(0)));
  if (!s.error().empty()) error = s.error();
  return roots;
}

std::vector<RowBounds> candidate_rows(SqliteDb& db, const TraceQuery& q, std::string& error) {
  // Every row whose bounds admit a match, best first: earliest start, or
  // longest duration. Only columns are read here, from an index that holds
  // them all, in its order (ties between rows need no order: the page's
  // own order is per trace); entries are fetched for the rows that must be
  // unpacked (a sort over rows with their BLOBs copied every BLOB).
  const analysis::TraceFilter& f = q.filter;
  const bool longest = q.order == analysis::TraceOrder::kLongest;
  std::vector<RowBounds> rows;
  if (f.operation.empty()) {
    SqliteStatement s(
        db, std::string("SELECT id, ") + kBoundColumns + " FROM trace_batches WHERE" +
                bounds_where(f, true) +
                (longest ? " ORDER BY max_duration_ns DESC" : " ORDER BY first_start_ns"));
    bind_bounds(s, q);
    while (s.ok() && s.step()) rows.push_back(read_bounds(s));
    if (!s.error().empty()) error = s.error();
    return rows;
  }
  // By root operation: the matching roots' own bounds, merged per row.
  const std::vector<uint64_t> roots = matching_roots(db, f.operation, error);
  if (!error.empty() || roots.empty()) return rows;
  SqliteStatement s(db, std::string("SELECT batch, ") + kBoundColumns +
                            " FROM batch_roots WHERE root = ?5 AND" + bounds_where(f, false));
  for (const uint64_t root : roots) {
    bind_bounds(s, q);
    s.bind(5, static_cast<int64_t>(root));
    while (s.ok() && s.step()) rows.push_back(read_bounds(s));
    if (!s.error().empty()) {
      error = s.error();
      return {};
    }
    s.reset();
  }
  std::sort(rows.begin(), rows.end(),
            [](const RowBounds& a, const RowBounds& b) { return a.batch < b.batch; });
  size_t merged = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (merged > 0 && rows[merged - 1].batch == rows[i].batch) {
      rows[merged - 1].merge(rows[i]);
    } else {
      rows[merged++] = rows[i];
    }
  }
  rows.resize(merged);
  std::erase_if(rows, [&f](const RowBounds& r) {
    return f.only_invalid ? r.invalid == 0 : !f.include_invalid && r.traces == r.invalid;
  });
  std::sort(rows.begin(), rows.end(), [longest](const RowBounds& a, const RowBounds& b) {
    return longest ? std::tie(b.max_duration, a.batch) < std::tie(a.max_duration, b.batch)
                   : std::tie(a.first_start, a.batch) < std::tie(b.first_start, b.batch);
  });
  return rows;
}

}  // namespace

TraceQueryResult SqliteStore::find_traces(const TraceQuery& q) {
  std::lock_guard lock(mutex_);
  // Same semantics as TraceCatalog (root-operation substring, exact host,
  // inclusive duration bounds), plus the time window on the trace start.
  // The rows' bounds select the candidates; their entries decide.
  const analysis::TraceFilter& f = q.filter;
  SqliteReadSnapshot snapshot(db_);
  TraceQueryResult result;
  const bool longest = q.order == analysis::TraceOrder::kLongest;
  last_error_.clear();
  const std::vector<RowBounds> rows = candidate_rows(db_, q, last_error_);
  if (!last_error_.empty()) return result;
  SqliteStatement entries_of(db_, "SELECT entries FROM trace_batches WHERE id = ?1");
  if (!entries_of.ok()) {
    last_error_ = entries_of.error();
    return result;
  }

  std::string problem;
  const auto name_of = [this, &problem](uint64_t id) {
    const std::string* text = names_.get(db_, id);
    if (text == nullptr && problem.empty()) problem = "unknown name id " + std::to_string(id);
    return text;
  };
  std::unordered_map<uint64_t, bool> root_matches;  // by names id, for f.operation
  const auto root_passes = [&](uint64_t root) {
    if (f.operation.empty()) return true;
    auto it = root_matches.find(root);
    if (it == root_matches.end()) {
      const std::string* text = name_of(root);
      const bool match = text != nullptr && text->find(f.operation) != std::string::npos;
      it = root_matches.emplace(root, match).first;
    }
    return it->second;
  };
  std::optional<uint64_t> host_id;  // f.host's names id (none: matches no trace)
  if (!f.host.empty()) {
    SqliteStatement host(db_, "SELECT id FROM names WHERE text = ?1");
    host.bind(1, std::string_view(f.host));
    host_id = host.ok() && host.step() ? static_cast<uint64_t>(host.int64(0))
                                       : std::numeric_limits<uint64_t>::max();
  }

  // The page is the first offset + limit traces in order: a heap keeps
  // those (its top is the last of them); the rest are only counted.
  const size_t keep = q.limit > std::numeric_limits<size_t>::max() - q.offset
                          ? std::numeric_limits<size_t>::max()
                          : q.offset + q.limit;
  std::vector<Candidate> heap;
  std::vector<BatchEntry> entries;
  std::string raw;
  // Whether every trace a row's bounds describe passes the query can be
  // told from them when the query filters on nothing but time, duration,
  // validity and (the bounds being that root's) root operation.
  const bool by_columns_only = f.host.empty() && !f.only_failed;
  const auto candidates = [&f](const RowBounds& r) {
    return static_cast<uint64_t>(f.only_invalid      ? r.invalid
                                 : f.include_invalid ? r.traces
                                                     : r.traces - r.invalid);
  };
  // Unpacks row `r`, counts its matches and offers them to the page.
  // Returns the matches, or nothing when the row cannot be read (problem).
  const auto unpack = [&](const RowBounds& r) -> std::optional<uint64_t> {
    entries_of.reset();
    entries_of.bind(1, r.batch);
    if (!entries_of.step()) {
      problem = "batch row " + std::to_string(r.batch) + ": " +
                (entries_of.error().empty() ? "missing" : entries_of.error());
      return std::nullopt;
    }
    if (std::string e = unpack_batch_entries(entries_of.blob(0), raw, entries); !e.empty()) {
      problem = "batch row " + std::to_string(r.batch) + ": " + e;
      return std::nullopt;
    }
    uint64_t matched = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const BatchEntry& e = entries[i];
      if (e.start < q.from_ns || e.start > q.to_ns || e.duration < f.min_duration) continue;
      if (f.max_duration >= 0 && e.duration > f.max_duration) continue;
      if (f.only_invalid ? e.valid : (!f.include_invalid && !e.valid)) continue;
      if (host_id && e.host != *host_id) continue;
      if (f.only_failed && e.failed == 0) continue;
      if (!root_passes(e.root)) continue;
      ++matched;
      Candidate c{longest ? -e.duration : e.start, e.trace_id, batch_row_id(r.batch, i), e,
                  std::string()};
      if (heap.size() >= keep && (keep == 0 || !before(c, heap.front()))) continue;
      c.problem = std::string(e.problem);
      c.entry.problem = {};
      if (heap.size() >= keep) {
        std::pop_heap(heap.begin(), heap.end(), before);
        heap.pop_back();
      }
      heap.push_back(std::move(c));
      std::push_heap(heap.begin(), heap.end(), before);
    }
    return matched;
  };
  // Rows come best first, so once one cannot improve the page no later one
  // can (the page's last only gets better): those are read only to count.
  std::vector<const RowBounds*> count_only;
  uint64_t count_only_traces = 0;
  for (const RowBounds& r : rows) {
    if (!problem.empty()) break;
    const bool all_pass = by_columns_only && r.first_start >= q.from_ns &&
                          r.last_start <= q.to_ns && r.min_duration >= f.min_duration &&
                          (f.max_duration < 0 || r.max_duration <= f.max_duration);
    // The best key any trace of the row can have, against the page's last.
    const bool may_enter_page =
        count_only.empty() &&
        (heap.size() < keep ||
         (keep > 0 && (longest ? -r.max_duration : r.first_start) <= heap.front().first));
    if (all_pass && !may_enter_page) {
      result.matched += candidates(r);
    } else if (!may_enter_page) {
      count_only.push_back(&r);
      count_only_traces += candidates(r);
    } else if (const auto matched = unpack(r)) {
      result.matched += *matched;
    } else {
      break;
    }
  }
  // Past the budget, an even sample of those rows: every stride-th one.
  const uint64_t budget = q.exact_count_traces;
  const uint64_t stride =
      budget == 0 || count_only_traces <= budget ? 1 : (count_only_traces + budget - 1) / budget;
  uint64_t sampled = 0, sampled_matched = 0, unsampled = 0;
  for (size_t i = 0; i < count_only.size() && problem.empty(); ++i) {
    if (i % stride != 0) {
      unsampled += candidates(*count_only[i]);
      continue;
    }
    const auto matched = unpack(*count_only[i]);
    if (!matched) break;
    sampled += candidates(*count_only[i]);
    sampled_matched += *matched;
  }
  result.matched += sampled_matched;
  if (unsampled > 0 && sampled > 0) {
    result.matched += static_cast<uint64_t>(
        std::llround(static_cast<double>(unsampled) * static_cast<double>(sampled_matched) /
                     static_cast<double>(sampled)));
    result.matched_estimated = true;
  }
  std::sort_heap(heap.begin(), heap.end(), before);
  for (size_t i = q.offset; i < heap.size(); ++i) {
    result.entries.push_back(to_trace_entry(heap[i].entry, name_of));
    result.entries.back().problem = std::move(heap[i].problem);
  }
  last_error_ = problem;
  return result;
}

std::vector<StoredTrace> SqliteStore::trace(int64_t trace_id) {
  std::lock_guard lock(mutex_);
  SqliteReadSnapshot snapshot(db_);
  std::string problem;
  const auto name_of = [this, &problem](uint64_t id) {
    const std::string* text = names_.get(db_, id);
    if (text == nullptr && problem.empty()) problem = "unknown name id " + std::to_string(id);
    return text;
  };
  std::vector<std::pair<int64_t, StoredTrace>> found;  // with their row ids
  // The rows with a span that can hold the id: spans are at most
  // kIdSpanWidth wide, so their lo lies at most that far below it.
  SqliteStatement batches(db_,
                          "SELECT id, bloom, entries, executions FROM trace_batches WHERE id IN "
                          "(SELECT batch FROM batch_id_spans WHERE lo BETWEEN ?1 AND ?2 "
                          "AND hi >= ?2) ORDER BY id");
  batches.bind(1, lowest_span_start(trace_id));
  batches.bind(2, trace_id);
  std::vector<BatchEntry> entries;
  std::string raw_entries, raw_executions;
  while (problem.empty() && batches.ok() && batches.step()) {
    if (!batch_may_hold(batches.blob(1), trace_id)) continue;
    const int64_t batch = batches.int64(0);
    const std::string where = "batch row " + std::to_string(batch) + ": ";
    if (std::string e = unpack_batch_entries(batches.blob(2), raw_entries, entries); !e.empty()) {
      problem = where + e;
      break;
    }
    bool unpacked = false;
    for (size_t i = 0; i < entries.size() && problem.empty(); ++i) {
      const BatchEntry& e = entries[i];
      if (e.trace_id != trace_id) continue;
      if (!unpacked) {
        if (std::string x = unpack_batch_blob(batches.blob(3), raw_executions); !x.empty()) {
          problem = where + "executions " + x;
        }
        unpacked = true;
      }
      // A damaged BLOB still lists the trace, without its executions.
      StoredTrace t{to_trace_entry(e, name_of), {}};
      if (problem.empty() && e.executions_offset + e.executions_size > raw_executions.size()) {
        problem = where + "executions cut short";
      } else if (problem.empty()) {
        const std::string_view packed =
            std::string_view(raw_executions).substr(e.executions_offset, e.executions_size);
        if (std::string x = unpack_executions(packed, name_of, t.executions, e.executions_base);
            !x.empty()) {
          problem = where + "executions of trace " + std::to_string(trace_id) + ": " + x;
        }
      }
      found.emplace_back(batch_row_id(batch, i), std::move(t));
    }
  }
  // By start, then as stored (the order of the one-row-per-trace index).
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.entry.start, a.first) < std::tie(b.second.entry.start, b.first);
  });
  std::vector<StoredTrace> traces;
  for (auto& [row, t] : found) traces.push_back(std::move(t));
  last_error_ = !batches.error().empty() ? batches.error() : problem;
  return traces;
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
