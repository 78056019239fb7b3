#include "store/sqlite_store.hpp"

#include <algorithm>
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

}  // namespace

TraceQueryResult SqliteStore::find_traces(const TraceQuery& q) {
  std::lock_guard lock(mutex_);
  // Same semantics as TraceCatalog (root-operation substring, exact host,
  // inclusive duration bounds), plus the time window on the trace start.
  // The batch rows' bounds select the candidates; their entries decide.
  const analysis::TraceFilter& f = q.filter;
  std::string where =
      " WHERE last_start_ns >= ?1 AND first_start_ns <= ?2 AND max_duration_ns >= ?3";
  if (f.max_duration >= 0) where += " AND min_duration_ns <= ?4";
  if (f.only_invalid) {
    where += " AND invalid > 0";
  } else if (!f.include_invalid) {
    where += " AND traces > invalid";
  }
  SqliteReadSnapshot snapshot(db_);
  TraceQueryResult result;
  // The rows most likely to hold the page first, so that later ones can
  // often be counted from their columns without being unpacked (below).
  const bool longest = q.order == analysis::TraceOrder::kLongest;
  SqliteStatement batches(
      db_,
      "SELECT id, entries, traces, invalid, first_start_ns, last_start_ns, min_duration_ns, "
      "max_duration_ns FROM trace_batches" +
          where +
          (longest ? " ORDER BY max_duration_ns DESC, id" : " ORDER BY first_start_ns, id"));
  if (!batches.ok()) {
    last_error_ = batches.error();
    return result;
  }
  batches.bind(1, q.from_ns);
  batches.bind(2, q.to_ns);
  batches.bind(3, f.min_duration);
  if (f.max_duration >= 0) batches.bind(4, f.max_duration);

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
  // Whether every trace of a row passes the query can be told from its
  // columns when the query filters on nothing but time, duration and
  // validity.
  const bool by_columns_only = f.operation.empty() && f.host.empty() && !f.only_failed;
  while (problem.empty() && batches.step()) {
    const int64_t batch = batches.int64(0);
    const int64_t traces = batches.int64(2), invalid = batches.int64(3);
    const int64_t first_start = batches.int64(4), last_start = batches.int64(5);
    const int64_t min_duration = batches.int64(6), max_duration = batches.int64(7);
    const bool all_pass = by_columns_only && first_start >= q.from_ns && last_start <= q.to_ns &&
                          min_duration >= f.min_duration &&
                          (f.max_duration < 0 || max_duration <= f.max_duration);
    // The best key any trace of the row can have, against the page's last.
    const bool may_enter_page =
        heap.size() < keep ||
        (keep > 0 && (longest ? -max_duration : first_start) <= heap.front().first);
    if (all_pass && !may_enter_page) {
      result.matched += static_cast<uint64_t>(f.only_invalid      ? invalid
                                              : f.include_invalid ? traces
                                                                  : traces - invalid);
      continue;
    }
    if (std::string e = unpack_batch_entries(batches.blob(1), raw, entries); !e.empty()) {
      problem = "batch row " + std::to_string(batch) + ": " + e;
      break;
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      const BatchEntry& e = entries[i];
      if (e.start < q.from_ns || e.start > q.to_ns || e.duration < f.min_duration) continue;
      if (f.max_duration >= 0 && e.duration > f.max_duration) continue;
      if (f.only_invalid ? e.valid : (!f.include_invalid && !e.valid)) continue;
      if (host_id && e.host != *host_id) continue;
      if (f.only_failed && e.failed == 0) continue;
      if (!root_passes(e.root)) continue;
      ++result.matched;
      Candidate c{q.order == analysis::TraceOrder::kLongest ? -e.duration : e.start, e.trace_id,
                  batch_row_id(batch, i), e, std::string()};
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
  }
  std::sort_heap(heap.begin(), heap.end(), before);
  for (size_t i = q.offset; i < heap.size(); ++i) {
    result.entries.push_back(to_trace_entry(heap[i].entry, name_of));
    result.entries.back().problem = std::move(heap[i].problem);
  }
  last_error_ = !batches.error().empty() ? batches.error() : problem;
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
  SqliteStatement batches(db_,
                          "SELECT id, bloom, entries, executions FROM trace_batches "
                          "WHERE min_trace_id <= ?1 AND max_trace_id >= ?1 ORDER BY id");
  batches.bind(1, trace_id);
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
        if (std::string x = unpack_executions(packed, name_of, t.executions); !x.empty()) {
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
