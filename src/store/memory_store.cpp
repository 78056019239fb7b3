#include "store/memory_store.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/reconstruct/trace_analysis.hpp"

namespace sonde::store {

struct MemoryStore::Snapshot {
  std::vector<StoredTrace> traces;  // valid and invalid, in arrival order
  std::unordered_multimap<int64_t, size_t> by_id;
  std::vector<OperationStats> operations;
  std::vector<CallEdge> edges;
  StoreInfo info;
};

namespace {

// Keeps every trace the reconstructor closes, valid or not, plus the
// operation call edges of the valid ones.
class Keeper final : public analysis::TraceSink {
 public:
  void on_trace(const analysis::Trace& t) override {
    traces.push_back(to_stored(t));
    add_edges(t);
  }
  void on_invalid_trace(const analysis::InvalidTrace& t) override {
    analysis::Trace partial = t.partial;
    partial.trace_id = t.trace_id;
    StoredTrace s = to_stored(partial);
    // As TraceCatalog: executions without an exit (tout -1) count to their entry.
    int64_t start = 0, end = 0;
    bool first = true;
    for (const auto& e : partial.executions) {
      if (first || e.tin < start) start = e.tin;
      if (first || std::max(e.tin, e.tout) > end) end = std::max(e.tin, e.tout);
      first = false;
    }
    s.entry.start = start;
    s.entry.duration = end - start;
    s.entry.valid = false;
    s.entry.problem = t.problems.empty()
                          ? std::string(analysis::to_string(t.closed_by))
                          : std::string(analysis::to_string(t.problems.front().kind)) + ": " +
                                t.problems.front().detail;
    traces.push_back(std::move(s));
  }

  std::vector<StoredTrace> traces;
  std::map<std::pair<std::string, std::string>, uint64_t> edges;

 private:
  void add_edges(const analysis::Trace& t) {
    // The caller of an execution is the last one seen one level up (eoi order).
    std::vector<std::string_view> stack;
    for (const auto& e : t.executions) {
      stack.resize(static_cast<size_t>(std::max(e.ess, 0)));
      const std::string_view caller = stack.empty() ? std::string_view() : stack.back();
      ++edges[{std::string(caller), std::string(e.operation)}];
      stack.push_back(e.operation);
    }
  }
};

// Sizes and modification times of every file under `path`: changes when a
// writer appends or adds a file.
std::string log_signature(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string sig;
  auto add = [&sig](const fs::directory_entry& f) {
    std::error_code e;
    if (!f.is_regular_file(e)) return;
    sig += f.path().string() + ':' + std::to_string(f.file_size(e)) + ':' +
           std::to_string(f.last_write_time(e).time_since_epoch().count()) + ';';
  };
  if (fs::is_directory(path, ec)) {
    std::vector<fs::directory_entry> files;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      files.push_back(*it);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(f);
  } else {
    add(fs::directory_entry(path, ec));
  }
  return sig;
}

std::shared_ptr<MemoryStore::Snapshot> read_snapshot(const std::string& log,
                                                     MemoryStoreLoad* load) {
  analysis::AnalysisOptions options;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  analysis::TraceAnalysis analysis(options);
  Keeper keeper;
  analysis.add_sink(keeper);
  const format::LogReadStats read = format::read_log(log, analysis.records());
  analysis::AnalysisResult result = analysis.finish();
  load->errors = read.errors;
  load->warnings = read.warnings;
  load->ok = read.ok || read.records > 0;

  auto snap = std::make_shared<MemoryStore::Snapshot>();
  snap->traces = std::move(keeper.traces);
  std::set<std::string> hosts;
  bool first = true;
  for (size_t i = 0; i < snap->traces.size(); ++i) {
    const auto& e = snap->traces[i].entry;
    snap->by_id.emplace(e.trace_id, i);
    if (!e.host.empty()) hosts.insert(e.host);
    if (!e.valid) {
      ++snap->info.invalid_traces;
      continue;
    }
    ++snap->info.traces;
    snap->info.executions += e.executions;
    if (first || e.start < snap->info.first_start) snap->info.first_start = e.start;
    if (first || e.start > snap->info.last_start) snap->info.last_start = e.start;
    first = false;
  }
  snap->info.hosts.assign(hosts.begin(), hosts.end());
  for (const analysis::OperationStats& s : result.operations) {
    OperationStats o;
    o.operation = std::string(s.key.operation);
    o.count = s.count;
    o.failed = s.failed;
    o.mean = s.inclusive.mean;
    o.min = s.inclusive.min;
    o.max = s.inclusive.max;
    o.p50 = s.inclusive.median;
    o.p90 = s.inclusive.p90;
    o.p95 = s.inclusive.p95;
    o.p99 = s.inclusive.p99;
    snap->operations.push_back(std::move(o));
  }
  for (const auto& [key, calls] : keeper.edges)
    snap->edges.push_back({key.first, key.second, calls});
  return snap;
}

}  // namespace

bool matches(const analysis::TraceEntry& e, const TraceQuery& q) {
  const analysis::TraceFilter& f = q.filter;
  if (e.valid ? f.only_invalid : !(f.include_invalid || f.only_invalid)) return false;
  if (!f.operation.empty() && e.root_operation.find(f.operation) == std::string::npos) return false;
  if (!f.host.empty() && e.host != f.host) return false;
  if (e.duration < f.min_duration) return false;
  if (f.max_duration >= 0 && e.duration > f.max_duration) return false;
  if (f.only_failed && e.failed == 0) return false;
  return e.start >= q.from_ns && e.start <= q.to_ns;
}

MemoryStore::MemoryStore(std::string log) : log_(std::move(log)) {
  signature_ = log_signature(log_);
  snapshot_ = read_snapshot(log_, &load_);
}

bool MemoryStore::refresh() {
  std::string sig = log_signature(log_);
  {
    std::lock_guard lock(mutex_);
    if (sig == signature_) return false;
  }
  // Read outside the lock: queries keep answering from the old snapshot.
  MemoryStoreLoad load;
  auto snap = read_snapshot(log_, &load);
  std::lock_guard lock(mutex_);
  signature_ = std::move(sig);
  load_ = std::move(load);
  snapshot_ = std::move(snap);
  ++generation_;
  return true;
}

std::shared_ptr<const MemoryStore::Snapshot> MemoryStore::snapshot() {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

StoreInfo MemoryStore::info() {
  std::lock_guard lock(mutex_);
  StoreInfo i = snapshot_->info;
  i.generation = generation_;
  return i;
}

TraceQueryResult MemoryStore::find_traces(const TraceQuery& query) {
  const auto snap = snapshot();
  std::vector<const analysis::TraceEntry*> hits;
  for (const StoredTrace& t : snap->traces) {
    if (matches(t.entry, query)) hits.push_back(&t.entry);
  }
  // The catalogue's order; ties broken by trace id so pages are stable.
  auto before = [&query](const analysis::TraceEntry* a, const analysis::TraceEntry* b) {
    if (query.order == analysis::TraceOrder::kLongest) {
      return std::tie(b->duration, a->trace_id) < std::tie(a->duration, b->trace_id);
    }
    return std::tie(a->start, a->trace_id) < std::tie(b->start, b->trace_id);
  };
  std::stable_sort(hits.begin(), hits.end(), before);
  TraceQueryResult r;
  r.matched = hits.size();
  for (size_t i = query.offset; i < hits.size() && r.entries.size() < query.limit; ++i) {
    r.entries.push_back(*hits[i]);
  }
  return r;
}

std::vector<StoredTrace> MemoryStore::trace(int64_t trace_id) {
  const auto snap = snapshot();
  std::vector<StoredTrace> out;
  auto [lo, hi] = snap->by_id.equal_range(trace_id);
  for (auto it = lo; it != hi; ++it) out.push_back(snap->traces[it->second]);
  std::sort(out.begin(), out.end(), [](const StoredTrace& a, const StoredTrace& b) {
    return a.entry.start < b.entry.start;
  });
  return out;
}

std::vector<OperationStats> MemoryStore::operations() { return snapshot()->operations; }

std::vector<CallEdge> MemoryStore::call_edges() { return snapshot()->edges; }

}  // namespace sonde::store
