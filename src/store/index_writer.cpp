// The embedded store's writer (docs/formats/store.md). Just over 500 lines: one
// class whose open, batching, aggregates and commit share one SQLite
// transaction's state.
#include "store/index_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <vector>

#include "analysis/reconstruct/trace_catalog.hpp"
#include "store/execution_blob.hpp"
#include "store/index_schema.hpp"

namespace sonde::store {

namespace fs = std::filesystem;

IndexWriter::~IndexWriter() {
  if (db_.is_open() && error_.empty()) finish();
}

std::string IndexWriter::open(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  if (!fs::is_directory(dir, ec)) return "cannot use " + dir + ": not a directory";
  const std::string path = (fs::path(dir) / kIndexFileName).string();
  if (std::string e = db_.open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE); !e.empty()) {
    return "cannot open the index " + e;
  }
  // WAL: `sonde serve` reads while the collector writes. synchronous=NORMAL
  // is durable against process crashes (the collector's concern), and
  // commits cost no fsync each.
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA cache_size=-65536"}) {
    if (std::string e = db_.exec(pragma); !e.empty()) return "cannot open the index " + e;
  }
  if (std::string e = db_.exec(index_schema_sql()); !e.empty()) {
    return "cannot create the index " + e;
  }
  {
    SqliteStatement version(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (version.ok() && version.step() && version.text(0) != std::to_string(kIndexSchemaVersion)) {
      return path + ": index schema version " + version.text(0) + ", this sonde writes " +
             std::to_string(kIndexSchemaVersion) + " (move it away; `sonde index` rebuilds it)";
    }
  }
  insert_batch_ = SqliteStatement(
      db_,
      "INSERT INTO trace_batches (traces, invalid, valid_executions, first_start_ns, "
      "last_start_ns, valid_first_start_ns, valid_last_start_ns, min_duration_ns, "
      "max_duration_ns, min_trace_id, max_trace_id, bloom, entries, executions) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  insert_root_ = SqliteStatement(
      db_,
      "INSERT INTO batch_roots (root, batch, traces, invalid, first_start_ns, last_start_ns, "
      "min_duration_ns, max_duration_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert_id_span_ =
      SqliteStatement(db_, "INSERT INTO batch_id_spans (lo, hi, batch) VALUES (?1, ?2, ?3)");
  insert_host_ = SqliteStatement(db_, "INSERT OR IGNORE INTO hosts (name) VALUES (?1)");
  insert_name_ = SqliteStatement(db_, "INSERT INTO names (id, text) VALUES (?1, ?2)");
  insert_reduced_ = SqliteStatement(
      db_,
      "INSERT INTO reduced_traces (first_trace_id, root_operation, host, first_start_ns, "
      "last_start_ns, traces, failed_traces, mean_ns, min_ns, max_ns, client, data) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  upsert_operation_ = SqliteStatement(
      db_,
      "INSERT OR REPLACE INTO operations (operation, count, failed, total, mean, min, max, p50, "
      "p90, p95, p99, exact_quantiles) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  upsert_edge_ = SqliteStatement(
      db_, "INSERT OR REPLACE INTO call_edges (caller, callee, calls) VALUES (?1, ?2, ?3)");
  upsert_client_ = SqliteStatement(
      db_,
      "INSERT OR REPLACE INTO clients (id, peer, log_file, received, stored, rejected, "
      "undecoded_bytes, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  set_meta_ = SqliteStatement(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)");
  insert_state_ = SqliteStatement(
      db_, "INSERT INTO operation_state (operation, failed, state) VALUES (?1, ?2, ?3)");
  for (const SqliteStatement* s : {&insert_batch_, &insert_root_, &insert_id_span_, &insert_host_,
                                   &insert_name_, &insert_reduced_, &upsert_operation_,
                                   &upsert_edge_, &upsert_client_, &set_meta_, &insert_state_}) {
    if (!s->ok()) return "cannot prepare the index: " + s->error();
  }
  if (std::string e = load_existing(); !e.empty()) return e;
  opened_ = true;
  if (!begin()) return error_;
  set_meta_.bind(1, std::string_view("schema_version"));
  set_meta_.bind(2, std::to_string(kIndexSchemaVersion));
  write(set_meta_);
  return commit();
}

std::string IndexWriter::load_existing() {
  {
    // Statistics cannot be rebuilt from reduced traces (they keep means and
    // extremes, not every duration), so appending would skew them.
    SqliteStatement reduced(db_, "SELECT COUNT(*) FROM reduced_traces");
    if (reduced.ok() && reduced.step() && reduced.int64(0) > 0) {
      return db_.path() +
             " holds reduced traces (sonde collect --reduce): its operation statistics cannot be "
             "rebuilt to append to it; collect into a new directory";
    }
  }
  SqliteStatement generation(db_, "SELECT value FROM meta WHERE key = 'generation'");
  if (generation.ok() && generation.step()) generation_ = std::stoull(generation.text(0));
  SqliteStatement clients(db_, "SELECT COALESCE(MAX(id), 0) + 1 FROM clients");
  if (clients.ok() && clients.step()) next_client_id_ = clients.int64(0);
  SqliteStatement counts(
      db_,
      "SELECT COALESCE(SUM(traces - invalid), 0), COALESCE(SUM(invalid), 0) FROM trace_batches");
  if (counts.ok() && counts.step()) {
    traces_ = static_cast<uint64_t>(counts.int64(0));
    invalid_traces_ = static_cast<uint64_t>(counts.int64(1));
  }
  SqliteStatement hosts(db_, "SELECT name FROM hosts");
  while (hosts.ok() && hosts.step()) hosts_.emplace(hosts.text(0));
  std::vector<std::string> by_id(1);  // id 0: ""
  SqliteStatement names(db_, "SELECT id, text FROM names");
  if (!names.ok()) return "cannot read the index: " + names.error();
  while (names.step()) {
    const auto id = static_cast<uint64_t>(names.int64(0));
    if (id == 0 || id > (uint64_t{1} << 32)) return "cannot read the index: bad name id";
    if (by_id.size() <= id) by_id.resize(id + 1);
    by_id[id] = names.text(1);
    remember_name(by_id[id], id);
  }
  if (!names.error().empty()) return "cannot read the index: " + names.error();
  const auto name_of = [&by_id](uint64_t id) -> const std::string* {
    return id < by_id.size() ? &by_id[id] : nullptr;
  };
  SqliteStatement edges(db_, "SELECT caller, callee, calls FROM call_edges");
  if (!edges.ok()) return "cannot read the index: " + edges.error();
  while (edges.step()) {
    const std::pair<uint64_t, uint64_t> key{name_id_or_empty(edges.text(0)),
                                            name_id_or_empty(edges.text(1))};
    edges_[key].calls = static_cast<uint64_t>(edges.int64(2));
  }
  if (load_saved_statistics(generation_)) return "";
  // Aggregates are not additive (quantiles): rebuild them from the executions.
  SqliteStatement batches(db_, "SELECT id, entries, executions FROM trace_batches ORDER BY id");
  if (!batches.ok()) return "cannot read the index: " + batches.error();
  std::vector<BatchEntry> entries;
  std::vector<StoredExecution> unpacked;
  std::string raw_entries, raw_executions;
  while (batches.step()) {
    const std::string where = "batch row " + std::to_string(batches.int64(0));
    std::string e = unpack_batch_entries(batches.blob(1), raw_entries, entries);
    if (e.empty()) {
      e = unpack_batch_blob(batches.blob(2), raw_executions);
      if (!e.empty()) e = "executions " + e;
    }
    if (!e.empty()) return "cannot read the index: " + where + ": " + e;
    for (const BatchEntry& entry : entries) {
      if (!entry.valid) continue;
      if (entry.executions_offset + entry.executions_size > raw_executions.size()) {
        return "cannot read the index: " + where + ": executions cut short";
      }
      unpacked.clear();
      e = unpack_executions(
          std::string_view(raw_executions).substr(entry.executions_offset, entry.executions_size),
          name_of, unpacked, entry.executions_base);
      if (!e.empty()) return "cannot read the index: " + where + ": " + e;
      for (const StoredExecution& x : unpacked) {
        OperationAggregate& a = operations_[name_id_or_empty(x.operation)];
        a.inclusive.add(analysis::saturating_span(x.tin, x.tout));
        a.failed += x.failed ? 1 : 0;
      }
    }
  }
  if (!batches.error().empty()) return "cannot read the index: " + batches.error();
  return "";
}

bool IndexWriter::load_saved_statistics(uint64_t generation) {
  // Saved in the transaction of the last commit before a clean close: valid
  // only if no commit followed (a writer that crashed after more commits
  // left them stale).
  SqliteStatement saved(db_, "SELECT value FROM meta WHERE key = 'statistics_generation'");
  if (!saved.ok() || !saved.step() || generation == 0 ||
      saved.text(0) != std::to_string(generation)) {
    return false;
  }
  std::unordered_map<uint64_t, OperationAggregate> loaded;
  SqliteStatement states(db_, "SELECT operation, failed, state FROM operation_state");
  while (states.ok() && states.step()) {
    OperationAggregate& a = loaded[name_id_or_empty(states.text(0))];
    a.failed = static_cast<uint64_t>(states.int64(1));
    if (!a.inclusive.load(states.blob(2))) return false;  // damaged: rebuild
  }
  // Every operation with statistics has its state, or none is trusted.
  SqliteStatement operations(db_, "SELECT COUNT(*) FROM operations");
  if (!states.error().empty() || !operations.ok() || !operations.step() ||
      static_cast<uint64_t>(operations.int64(0)) != loaded.size()) {
    return false;
  }
  operations_ = std::move(loaded);
  operation_cache_.fill({});
  return true;
}

IndexWriter::OperationAggregate& IndexWriter::operation_aggregate(uint64_t id) {
  CachedOperation& slot = operation_cache_[id & (kAggregateCacheSlots - 1)];
  if (slot.aggregate == nullptr || slot.id != id) slot = {id, &operations_[id]};
  return *slot.aggregate;
}

IndexWriter::EdgeAggregate& IndexWriter::edge_aggregate(uint64_t caller, uint64_t callee) {
  CachedEdge& slot =
      edge_cache_[(caller * 0x9e3779b97f4a7c15ULL ^ callee) & (kAggregateCacheSlots - 1)];
  if (slot.aggregate == nullptr || slot.caller != caller || slot.callee != callee) {
    slot = {caller, callee, &edges_[{caller, callee}]};
  }
  return *slot.aggregate;
}

void IndexWriter::save_statistics() {
  if (std::string e = db_.exec("DELETE FROM operation_state"); !e.empty()) {
    fail("cannot write the index " + e);
    return;
  }
  std::string state;
  for (const auto& [id, a] : operations_) {
    state.clear();
    a.inclusive.save(state);
    insert_state_.bind(1, name_text(id));
    insert_state_.bind(2, static_cast<int64_t>(a.failed));
    insert_state_.bind_blob(3, state);
    if (!write(insert_state_)) return;
  }
  set_meta_.bind(1, std::string_view("statistics_generation"));
  set_meta_.bind(2, std::to_string(generation_));
  write(set_meta_);
}

void IndexWriter::fail(const std::string& message) {
  if (error_.empty()) error_ = message;
}

bool IndexWriter::write(SqliteStatement& s) {
  s.step();
  s.reset();
  if (s.error().empty()) return true;
  fail("cannot write the index: " + s.error());
  return false;
}

bool IndexWriter::begin() {
  if (in_transaction_) return true;
  if (std::string e = db_.exec("BEGIN"); !e.empty()) {
    fail("cannot write the index " + e);
    return false;
  }
  in_transaction_ = true;
  return true;
}

void IndexWriter::add(const analysis::Trace& trace, int64_t client) {
  if (!error_.empty() || !begin()) return;
  insert(trace, true, "", client);
  aggregate(trace, operation_ids_);
  ++traces_;
  if (++pending_ >= batch_traces_) commit();
}

void IndexWriter::count(const analysis::Trace& trace) {
  if (!error_.empty() || !begin()) return;  // aggregate() may add names
  operation_ids_.clear();
  for (const analysis::Execution& e : trace.executions) {
    operation_ids_.push_back(name_id_or_empty(e.operation));
  }
  aggregate(trace, operation_ids_);
  ++traces_;
}

void IndexWriter::add_reduced(const analysis::ReducedTrace& r, int64_t client) {
  if (!error_.empty() || !begin()) return;
  packed_.clear();
  pack_reduced_executions(
      r.executions, [this](std::string_view name) { return name_id(name); }, packed_);
  if (!error_.empty()) return;
  SqliteStatement& x = insert_reduced_;
  x.bind(1, r.first_trace_id);
  x.bind(2,
         r.executions.empty() ? std::string_view() : std::string_view(r.executions[0].operation));
  x.bind(3, std::string_view(r.host));
  x.bind(4, r.first_start);
  x.bind(5, r.last_start);
  x.bind(6, static_cast<int64_t>(r.traces));
  x.bind(7, static_cast<int64_t>(r.failed_traces));
  x.bind(8, r.mean_duration);
  x.bind(9, r.min_duration);
  x.bind(10, r.max_duration);
  x.bind(11, client);
  x.bind_blob(12, packed_);
  if (!write(x)) return;
  if (++pending_ >= batch_traces_) commit();
}

void IndexWriter::add_invalid(const analysis::InvalidTrace& trace, int64_t client) {
  if (!error_.empty() || !begin()) return;
  const std::string problem = invalid_trace_problem(trace);
  analysis::Trace partial = trace.partial;
  partial.trace_id = trace.trace_id;
  insert(partial, false, problem, client);
  ++invalid_traces_;
  if (++pending_ >= batch_traces_) commit();
}

void IndexWriter::insert(const analysis::Trace& trace, bool valid, const std::string& problem,
                         int64_t client) {
  // Start and duration as TraceCatalog computes them: an invalid trace may
  // have executions whose exit was never seen (tout == -1).
  int64_t start = 0, end = 0;
  int64_t failed = 0;
  bool first = true;
  for (const analysis::Execution& e : trace.executions) {
    if (e.failed) ++failed;
    if (first || e.tin < start) start = e.tin;
    if (first || std::max(e.tin, e.tout) > end) end = std::max(e.tin, e.tout);
    first = false;
  }
  packed_.clear();
  operation_ids_.clear();
  pack_executions(
      trace.executions, [this](std::string_view name) { return name_id(name); }, packed_,
      &operation_ids_, start);
  BatchEntry entry;
  entry.trace_id = trace.trace_id;
  entry.start = start;
  entry.executions_base = start;
  entry.duration = end - start;
  entry.root = name_id_or_empty(analysis::root_operation(trace));
  entry.host = name_id_or_empty(trace.host);
  entry.thread_id = trace.thread_id;
  entry.parent_trace_id = trace.parent_trace_id;
  entry.executions = static_cast<uint32_t>(trace.executions.size());
  entry.failed = static_cast<uint32_t>(failed);
  entry.valid = valid;
  entry.problem = problem;
  entry.client = client;
  if (!error_.empty()) return;  // a name could not be written
  if (entry.host >= host_ids_known_.size() || !host_ids_known_[entry.host]) {
    if (hosts_.find(trace.host) == hosts_.end()) {
      insert_host_.bind(1, trace.host);
      if (!write(insert_host_)) return;
      hosts_.emplace(trace.host);
    }
    if (entry.host >= host_ids_known_.size()) host_ids_known_.resize(entry.host + 1, false);
    host_ids_known_[entry.host] = true;
  }
  batch_.add(entry, packed_);
  // Room for a huge trace's executions is not kept for the writer's life.
  if (packed_.capacity() > kLargestKeptPackedBytes) std::string().swap(packed_);
  if (batch_.size() >= kMaxBatchTraces) write_batch();
}

void IndexWriter::write_batch() {
  if (batch_.empty() || !error_.empty()) return;
  const BatchRow r = batch_.take();
  SqliteStatement& b = insert_batch_;
  b.bind(1, r.all.traces);
  b.bind(2, r.all.invalid);
  b.bind(3, r.valid_executions);
  b.bind(4, r.all.first_start);
  b.bind(5, r.all.last_start);
  if (r.all.traces > r.all.invalid) {
    b.bind(6, r.valid_first_start);
    b.bind(7, r.valid_last_start);
  }  // else NULL: reset() clears the bindings
  b.bind(8, r.all.min_duration);
  b.bind(9, r.all.max_duration);
  b.bind(10, r.min_trace_id);
  b.bind(11, r.max_trace_id);
  b.bind_blob(12, r.bloom);
  b.bind_blob(13, r.entries);
  b.bind_blob(14, r.executions);
  if (!write(b)) return;
  const int64_t batch = sqlite3_last_insert_rowid(db_.handle());
  for (const BatchRootSummary& root : r.roots) {
    const TraceBounds& bounds = root.bounds;
    SqliteStatement& x = insert_root_;
    x.bind(1, static_cast<int64_t>(root.root));
    x.bind(2, batch);
    x.bind(3, bounds.traces);
    x.bind(4, bounds.invalid);
    x.bind(5, bounds.first_start);
    x.bind(6, bounds.last_start);
    x.bind(7, bounds.min_duration);
    x.bind(8, bounds.max_duration);
    if (!write(x)) return;
  }
  for (const TraceIdSpan& span : r.id_spans) {
    SqliteStatement& x = insert_id_span_;
    x.bind(1, span.lo);
    x.bind(2, span.hi);
    x.bind(3, batch);
    if (!write(x)) return;
  }
}

uint64_t IndexWriter::name_id_or_empty(std::string_view name) {
  return name.empty() ? 0 : name_id(name);
}

uint64_t IndexWriter::name_id(std::string_view name) {
  if (const uint64_t* hit = name_cache_.find(name)) return *hit;
  uint64_t id = 0;
  if (auto it = names_.find(name); it != names_.end()) {
    id = it->second;
  } else {
    id = next_name_id_;
    SqliteStatement& n = insert_name_;
    n.bind(1, static_cast<int64_t>(id));
    n.bind(2, name);
    if (!write(n)) return 0;
    remember_name(std::string(name), id);
  }
  name_cache_.put(name, name_text(id), id);
  return id;
}

void IndexWriter::remember_name(std::string text, uint64_t id) {
  const auto [it, added] = names_.emplace(std::move(text), id);
  if (!added) return;
  if (name_texts_.size() <= id) name_texts_.resize(id + 1, nullptr);
  name_texts_[id] = &it->first;
  next_name_id_ = std::max(next_name_id_, id + 1);
}

std::string_view IndexWriter::name_text(uint64_t id) const {
  return id < name_texts_.size() && name_texts_[id] != nullptr ? std::string_view(*name_texts_[id])
                                                               : std::string_view();
}

void IndexWriter::aggregate(const analysis::Trace& trace,
                            const std::vector<uint64_t>& operation_ids) {
  // Caller of an execution: the nearest earlier execution one level up.
  std::vector<uint64_t>& stack = caller_stack_;
  stack.clear();
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const analysis::Execution& e = trace.executions[i];
    const uint64_t operation = operation_ids[i];
    OperationAggregate& op = operation_aggregate(operation);
    op.inclusive.add(e.duration());
    if (e.failed) ++op.failed;
    op.dirty = true;

    const size_t depth = static_cast<size_t>(std::max(e.ess, 0));
    stack.resize(std::min(stack.size(), depth));
    const uint64_t caller = depth == 0 || stack.size() < depth ? 0 : stack.back();
    EdgeAggregate& edge = edge_aggregate(caller, operation);
    ++edge.calls;
    edge.dirty = true;
    stack.push_back(operation);
  }
}

void IndexWriter::put_client(const ClientRecord& c) {
  if (!error_.empty() || !begin()) return;
  SqliteStatement& s = upsert_client_;
  s.bind(1, c.id);
  s.bind(2, std::string_view(c.peer));
  s.bind(3, std::string_view(c.log_file));
  s.bind(4, static_cast<int64_t>(c.received));
  s.bind(5, static_cast<int64_t>(c.stored));
  s.bind(6, static_cast<int64_t>(c.rejected));
  s.bind(7, static_cast<int64_t>(c.undecoded_bytes));
  s.bind(8, std::string_view(c.error));
  write(s);
  next_client_id_ = std::max(next_client_id_, c.id + 1);
}

std::string IndexWriter::commit() {
  if (!error_.empty()) return error_;
  if (!in_transaction_) return "";
  write_batch();
  for (auto& [id, a] : operations_) {
    if (!a.dirty) continue;
    a.dirty = false;
    const analysis::DistributionSummary s = a.inclusive.summary();
    SqliteStatement& u = upsert_operation_;
    u.bind(1, name_text(id));
    u.bind(2, static_cast<int64_t>(s.count));
    u.bind(3, static_cast<int64_t>(a.failed));
    u.bind(4, s.total);
    u.bind(5, s.mean);
    u.bind(6, s.min);
    u.bind(7, s.max);
    u.bind(8, s.median);
    u.bind(9, s.p90);
    u.bind(10, s.p95);
    u.bind(11, s.p99);
    u.bind(12, int64_t{s.exact_quantiles ? 1 : 0});
    write(u);
  }
  for (auto& [key, edge] : edges_) {
    if (!edge.dirty) continue;
    edge.dirty = false;
    SqliteStatement& u = upsert_edge_;
    u.bind(1, name_text(key.first));
    u.bind(2, name_text(key.second));
    u.bind(3, static_cast<int64_t>(edge.calls));
    write(u);
  }
  set_meta_.bind(1, std::string_view("generation"));
  set_meta_.bind(2, std::to_string(++generation_));
  write(set_meta_);
  if (saving_statistics_ && error_.empty()) save_statistics();
  if (!error_.empty()) {
    db_.exec("ROLLBACK");
    in_transaction_ = false;
    return error_;
  }
  if (std::string e = db_.exec("COMMIT"); !e.empty()) {
    db_.exec("ROLLBACK");
    in_transaction_ = false;
    fail("cannot write the index " + e);
    return error_;
  }
  in_transaction_ = false;
  pending_ = 0;
  return "";
}

std::string invalid_trace_problem(const analysis::InvalidTrace& trace) {
  // Same reason text as `sonde traces --invalid` (TraceCatalog).
  return trace.problems.empty() ? std::string(analysis::to_string(trace.closed_by))
                                : std::string(analysis::to_string(trace.problems.front().kind)) +
                                      ": " + trace.problems.front().detail;
}

std::string IndexWriter::finish() {
  // The last commit saves the statistics' state, so that reopening reads
  // that instead of every execution (10^9 of them at scale). It must not
  // be skipped when nothing is pending.
  // Only a writer whose open() succeeded holds every operation's state: a
  // refused or half-loaded one must not save what it has as the whole.
  if (error_.empty() && opened_ && !in_transaction_) begin();
  saving_statistics_ = opened_;
  std::string e = commit();
  saving_statistics_ = false;
  db_.close();
  return e;
}

}  // namespace sonde::store
