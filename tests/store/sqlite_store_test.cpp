// The SQLite store (DIR/index.sqlite) answers the TraceStore queries with
// the same results as the analysis layer computes straight from the log:
// the trace catalogue for searches and paging, the reconstructor for trace
// lookup, plain sorting for percentiles, and Kieker's own dependency graph
// (golden output) for the call edges of the bookstore log.
#include "store/sqlite_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "../format/format_test_support.hpp"
#include "analysis/model/distribution.hpp"
#include "analysis/reconstruct/trace_catalog.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/log_reader.hpp"
#include "store/index_build.hpp"
#include "store/index_schema.hpp"
#include "store/index_store.hpp"
#include "store/index_writer.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;
using format::test::testdata;

const std::string kBookstore = testdata("kieker/bookstore-oer-2010/log");

// Every valid trace of a log, as owned copies (the reference the store must match).
class Collect : public analysis::TraceSink {
 public:
  void on_trace(const analysis::Trace& t) override { traces.push_back(to_stored(t)); }
  void on_invalid_trace(const analysis::InvalidTrace&) override { ++invalid; }
  std::vector<StoredTrace> traces;
  uint64_t invalid = 0;
};

std::vector<analysis::TraceEntry> catalog(const std::string& log, const analysis::TraceFilter& f,
                                          analysis::TraceOrder order, uint64_t* matched) {
  analysis::TraceCatalog c(f, order, 1'000'000);
  analysis::TraceReconstructor r(c);
  EXPECT_TRUE(format::read_log(log, r).ok);
  r.finish();
  *matched = c.matched();
  return c.entries();
}

void expect_same_entries(const std::vector<analysis::TraceEntry>& got,
                         const std::vector<analysis::TraceEntry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].trace_id, want[i].trace_id) << i;
    EXPECT_EQ(got[i].root_operation, want[i].root_operation) << i;
    EXPECT_EQ(got[i].host, want[i].host) << i;
    EXPECT_EQ(got[i].thread_id, want[i].thread_id) << i;
    EXPECT_EQ(got[i].start, want[i].start) << i;
    EXPECT_EQ(got[i].duration, want[i].duration) << i;
    EXPECT_EQ(got[i].executions, want[i].executions) << i;
    EXPECT_EQ(got[i].failed, want[i].failed) << i;
    EXPECT_EQ(got[i].valid, want[i].valid) << i;
    EXPECT_EQ(got[i].problem, want[i].problem) << i;
  }
}

class BookstoreStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("sonde-store");
    const IndexBuildResult built = build_index_from_log(kBookstore, dir_->path());
    ASSERT_EQ(built.error, "");
    std::string error;
    store_ = SqliteStore::open(dir_->path(), &error).release();
    ASSERT_NE(store_, nullptr) << error;
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
  }
  static TempDir* dir_;
  static SqliteStore* store_;
};
TempDir* BookstoreStore::dir_ = nullptr;
SqliteStore* BookstoreStore::store_ = nullptr;

TEST_F(BookstoreStore, InfoCountsEveryTrace) {
  ASSERT_TRUE(is_indexed_store(dir_->path()));
  std::string error;
  const auto reopened = open_indexed_store(dir_->path(), &error);
  ASSERT_NE(reopened, nullptr) << error;
  EXPECT_EQ(reopened->info().traces, 1635u);
  const StoreInfo info = store_->info();
  EXPECT_EQ(info.traces, 1635u);  // the fixture's README; Kieker's own count
  EXPECT_EQ(info.invalid_traces, 0u);
  // Every bookstore trace is searchBook -> getBook, getOffers -> getBook.
  EXPECT_EQ(info.executions, 4u * 1635u);
  // Hosts of the traces (their entry execution): every searchBook runs on SRV0.
  EXPECT_EQ(info.hosts, (std::vector<std::string>{"SRV0"}));
  EXPECT_GT(info.generation, 0u);
  EXPECT_LE(info.first_start, info.last_start);
  EXPECT_GT(info.first_start, 0);
}

TEST_F(BookstoreStore, SearchesMatchTheCatalogue) {
  std::vector<analysis::TraceFilter> filters(5);
  filters[1].host = "SRV0";
  filters[2].operation = "searchBook";
  filters[3].operation = "no such operation";
  // A duration window around the median trace.
  {
    uint64_t m = 0;
    auto all = catalog(kBookstore, {}, analysis::TraceOrder::kLongest, &m);
    filters[4].min_duration = all[all.size() / 2].duration;
    filters[4].max_duration = all[all.size() / 4].duration;
    filters[4].host = "SRV1";
  }
  for (const auto order : {analysis::TraceOrder::kStart, analysis::TraceOrder::kLongest}) {
    for (size_t i = 0; i < filters.size(); ++i) {
      SCOPED_TRACE(i);
      uint64_t matched = 0;
      const auto want = catalog(kBookstore, filters[i], order, &matched);
      TraceQuery q;
      q.filter = filters[i];
      q.order = order;
      q.limit = 1'000'000;
      const TraceQueryResult all = store_->find_traces(q);
      EXPECT_EQ(all.matched, matched);
      expect_same_entries(all.entries, want);
      // Paging walks the same list in pieces.
      q.limit = 37;
      q.offset = 74;
      const TraceQueryResult page = store_->find_traces(q);
      EXPECT_EQ(page.matched, matched);
      const size_t from = std::min<size_t>(74, want.size());
      const size_t to = std::min<size_t>(74 + 37, want.size());
      expect_same_entries(page.entries, {want.begin() + from, want.begin() + to});
    }
  }
  EXPECT_EQ(store_->last_error(), "");
}

TEST_F(BookstoreStore, TimeWindowSelectsByTraceStart) {
  uint64_t matched = 0;
  const auto all = catalog(kBookstore, {}, analysis::TraceOrder::kStart, &matched);
  TraceQuery q;
  q.from_ns = all[100].start;
  q.to_ns = all[199].start;
  q.limit = 1000;
  const TraceQueryResult r = store_->find_traces(q);
  const auto expected = std::count_if(all.begin(), all.end(), [&](const auto& e) {
    return e.start >= q.from_ns && e.start <= q.to_ns;
  });
  EXPECT_GE(expected, 100);
  EXPECT_EQ(r.matched, static_cast<uint64_t>(expected));
  for (const auto& e : r.entries) {
    EXPECT_GE(e.start, q.from_ns);
    EXPECT_LE(e.start, q.to_ns);
  }
}

TEST_F(BookstoreStore, TraceLookupReturnsTheReconstructedExecutions) {
  Collect reference;
  analysis::TraceReconstructor r(reference);
  ASSERT_TRUE(format::read_log(kBookstore, r).ok);
  r.finish();
  ASSERT_EQ(reference.traces.size(), 1635u);
  for (const size_t i : {size_t{0}, size_t{817}, size_t{1634}}) {
    const StoredTrace& want = reference.traces[i];
    const std::vector<StoredTrace> got = store_->trace(want.entry.trace_id);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].entry.trace_id, want.entry.trace_id);
    EXPECT_EQ(got[0].entry.start, want.entry.start);
    EXPECT_EQ(got[0].entry.duration, want.entry.duration);
    ASSERT_EQ(got[0].executions.size(), want.executions.size());
    for (size_t k = 0; k < want.executions.size(); ++k) {
      const StoredExecution& a = got[0].executions[k];
      const StoredExecution& b = want.executions[k];
      EXPECT_EQ(a.operation, b.operation);
      EXPECT_EQ(a.component, b.component);
      EXPECT_EQ(a.host, b.host);
      EXPECT_EQ(a.tin, b.tin);
      EXPECT_EQ(a.tout, b.tout);
      EXPECT_EQ(a.eoi, b.eoi);
      EXPECT_EQ(a.ess, b.ess);
      EXPECT_EQ(a.failed, b.failed);
    }
  }
  EXPECT_TRUE(store_->trace(12345).empty());
}

TEST_F(BookstoreStore, OperationStatisticsMatchSortedDurations) {
  Collect reference;
  analysis::TraceReconstructor r(reference);
  ASSERT_TRUE(format::read_log(kBookstore, r).ok);
  r.finish();
  std::map<std::string, std::vector<int64_t>> durations;
  for (const StoredTrace& t : reference.traces) {
    for (const StoredExecution& e : t.executions) durations[e.operation].push_back(e.tout - e.tin);
  }
  const std::vector<OperationStats> ops = store_->operations();
  ASSERT_EQ(ops.size(), durations.size());
  // Largest total inclusive time first.
  for (size_t i = 1; i < ops.size(); ++i) {
    EXPECT_GE(ops[i - 1].mean * static_cast<double>(ops[i - 1].count),
              ops[i].mean * static_cast<double>(ops[i].count));
  }
  for (const OperationStats& o : ops) {
    SCOPED_TRACE(o.operation);
    ASSERT_TRUE(durations.count(o.operation));
    const analysis::DistributionSummary want = analysis::summarize(durations[o.operation]);
    EXPECT_EQ(o.count, want.count);
    EXPECT_EQ(o.failed, 0u);
    EXPECT_EQ(o.min, want.min);
    EXPECT_EQ(o.max, want.max);
    EXPECT_DOUBLE_EQ(o.mean, want.mean);
    EXPECT_DOUBLE_EQ(o.p50, want.median);
    EXPECT_DOUBLE_EQ(o.p90, want.p90);
    EXPECT_DOUBLE_EQ(o.p95, want.p95);
    EXPECT_DOUBLE_EQ(o.p99, want.p99);
  }
}

TEST_F(BookstoreStore, CallEdgesMatchKiekersDependencyGraph) {
  // assemblyOperationDependencyGraph.dot from Kieker: four edges, 1635 calls each.
  const std::vector<CallEdge> edges = store_->call_edges();
  std::map<std::pair<std::string, std::string>, uint64_t> got;
  for (const CallEdge& e : edges) got[{e.caller, e.callee}] = e.calls;
  const std::string search = "bookstoreTracing.Bookstore.searchBook()";
  const std::string book = "bookstoreTracing.Catalog.getBook(boolean)";
  const std::string offers = "bookstoreTracing.CRM.getOffers()";
  const std::map<std::pair<std::string, std::string>, uint64_t> want = {{{"", search}, 1635},
                                                                        {{search, book}, 1635},
                                                                        {{search, offers}, 1635},
                                                                        {{offers, book}, 1635}};
  EXPECT_EQ(got, want);
}

// Failed and invalid traces, and an index appended to by a second writer,
// on hand-made traces.
TEST(SqliteStore, FailedInvalidAndReopenedIndex) {
  TempDir dir("sonde-store");
  auto make = [](int64_t id, int64_t start, bool fail) {
    analysis::Trace t;
    t.trace_id = id;
    t.thread_id = 1;
    t.host = "h";
    t.parent_trace_id = id;
    t.executions.push_back(
        {"root()", "R", "h", start, start + 100, 0, 0, false, false, "", -1, -1});
    t.executions.push_back({"child()", "C", "h", start + 10, start + 50, 1, 1, fail, false,
                            fail ? "E: no" : "", -1, -1});
    return t;
  };
  {
    IndexWriter w;
    ASSERT_EQ(w.open(dir.path()), "");
    w.add(make(1, 1000, false), 0);
    w.add(make(2, 2000, true), 0);
    analysis::InvalidTrace bad;
    bad.trace_id = 3;
    bad.closed_by = analysis::CloseCause::kTimeout;
    bad.problems.push_back({analysis::TraceProblemKind::kMissingAfterEvent, "root()"});
    bad.partial = make(3, 3000, false);
    bad.partial.executions[0].tout = -1;
    w.add_invalid(bad, 0);
    ASSERT_EQ(w.finish(), "");
  }
  {
    IndexWriter w;  // appends; aggregates must include the first writer's traces
    ASSERT_EQ(w.open(dir.path()), "");
    w.add(make(4, 4000, true), 0);
    ASSERT_EQ(w.finish(), "");
  }
  std::string error;
  auto store = SqliteStore::open(dir.path(), &error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->info().traces, 3u);
  EXPECT_EQ(store->info().invalid_traces, 1u);

  TraceQuery q;
  q.filter.only_failed = true;
  TraceQueryResult r = store->find_traces(q);
  ASSERT_EQ(r.matched, 2u);
  EXPECT_EQ(r.entries[0].trace_id, 2);
  EXPECT_EQ(r.entries[1].trace_id, 4);

  q = {};
  q.filter.only_invalid = true;
  r = store->find_traces(q);
  ASSERT_EQ(r.matched, 1u);
  EXPECT_FALSE(r.entries[0].valid);
  EXPECT_EQ(r.entries[0].problem, "missing-after-event: root()");
  q.filter.only_invalid = false;
  q.filter.include_invalid = true;
  EXPECT_EQ(store->find_traces(q).matched, 4u);

  const auto ops = store->operations();
  ASSERT_EQ(ops.size(), 2u);
  // Largest total time first: root() 3 x 100 ns, child() 3 x 40 ns.
  EXPECT_EQ(ops[0].operation, "root()");
  EXPECT_EQ(ops[0].count, 3u);
  EXPECT_EQ(ops[0].failed, 0u);
  EXPECT_EQ(ops[1].operation, "child()");
  EXPECT_EQ(ops[1].count, 3u);
  EXPECT_EQ(ops[1].failed, 2u);
  // Executions and time range count valid traces only; the invalid one
  // started at 3000.
  EXPECT_EQ(store->info().executions, 6u);
  EXPECT_EQ(store->info().last_start, 4000);
  const auto edges = store->call_edges();
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].caller, "");
  EXPECT_EQ(edges[0].calls, 3u);
  EXPECT_EQ(edges[1].caller, "root()");
  EXPECT_EQ(edges[1].callee, "child()");
  EXPECT_EQ(edges[1].calls, 3u);
  const auto failed = store->trace(2);
  ASSERT_EQ(failed.size(), 1u);
  ASSERT_EQ(failed[0].executions.size(), 2u);
  EXPECT_TRUE(failed[0].executions[1].failed);
  EXPECT_EQ(failed[0].executions[1].cause, "E: no");
}

TEST(SqliteStore, MissingOrForeignFilesAreNamed) {
  TempDir dir("sonde-store");
  std::string error;
  EXPECT_EQ(SqliteStore::open(dir.path(), &error), nullptr);
  EXPECT_NE(error.find("index.sqlite"), std::string::npos) << error;
  const std::string foreign = dir / "other.sqlite";
  {
    SqliteDb db;
    ASSERT_EQ(db.open(foreign, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE), "");
    ASSERT_EQ(db.exec("CREATE TABLE t (x INTEGER)"), "");
  }
  EXPECT_EQ(SqliteStore::open(foreign, &error), nullptr);
  EXPECT_NE(error.find("not a sonde index"), std::string::npos) << error;

  EXPECT_FALSE(is_indexed_store(dir.path()));
  EXPECT_EQ(open_indexed_store(dir.path(), &error), nullptr);
  EXPECT_NE(error.find("index.sqlite"), std::string::npos) << error;

  const IndexBuildResult r = build_index_from_log(dir / "no-such-log", dir / "out");
  EXPECT_NE(r.error.find("no-such-log"), std::string::npos) << r.error;
  // A regular file where the store directory should be.
  const IndexBuildResult blocked = build_index_from_log(kBookstore, foreign + "/sub");
  EXPECT_NE(blocked.error.find("other.sqlite"), std::string::npos) << blocked.error;
}

// Readers stay open while a collector writes: names first used after the
// reader opened are found; a damaged BLOB is reported, naming the row.
TEST(SqliteStore, NewNamesAreSeenAndDamagedExecutionsNamed) {
  TempDir dir("sonde-store");
  auto trace_of = [](int64_t id, const std::string& op) {
    analysis::Trace t;
    t.trace_id = id;
    t.parent_trace_id = id;
    t.host = "h";
    analysis::Execution e;
    e.operation = op;
    e.component = "C";
    e.host = "h";
    e.tin = 1000 * id;
    e.tout = e.tin + 10;
    t.executions.push_back(e);
    return t;
  };
  const std::string first = "first()", second = "second()";
  IndexWriter w;
  ASSERT_EQ(w.open(dir.path()), "");
  w.add(trace_of(1, first), 0);
  ASSERT_EQ(w.commit(), "");
  std::string error;
  auto store = SqliteStore::open(dir.path(), &error);
  ASSERT_NE(store, nullptr) << error;
  ASSERT_EQ(store->trace(1).at(0).executions.at(0).operation, first);
  w.add(trace_of(2, second), 0);
  ASSERT_EQ(w.commit(), "");
  const auto later = store->trace(2);
  ASSERT_EQ(later.size(), 1u);
  ASSERT_EQ(later[0].executions.size(), 1u);
  EXPECT_EQ(later[0].executions[0].operation, second);
  EXPECT_EQ(store->last_error(), "");
  ASSERT_EQ(w.finish(), "");

  {
    SqliteDb db;
    ASSERT_EQ(db.open(dir / "index.sqlite", SQLITE_OPEN_READWRITE), "");
    // Trace 2 was committed on its own: the second batch row.
    ASSERT_EQ(db.exec("UPDATE trace_batches SET executions = x'0001' WHERE min_trace_id = 2"), "");
    // As after a crash: no saved statistics state, so a writer must rebuild.
    ASSERT_EQ(db.exec("DELETE FROM meta WHERE key = 'statistics_generation'"), "");
  }
  const auto damaged = store->trace(2);
  ASSERT_EQ(damaged.size(), 1u);
  EXPECT_EQ(damaged[0].entry.root_operation, second);
  EXPECT_TRUE(damaged[0].executions.empty());
  EXPECT_NE(store->last_error().find("batch row 2: executions not a zstd frame"), std::string::npos)
      << store->last_error();
  EXPECT_EQ(store->trace(1).at(0).executions.size(), 1u);
  // Reopening for writing rebuilds the aggregates from every BLOB: it refuses the damaged one.
  IndexWriter again;
  const std::string reopen = again.open(dir.path());
  EXPECT_NE(reopen.find("batch row 2: executions not a zstd frame"), std::string::npos) << reopen;
}

TEST(SqliteStore, AnIndexOfAnotherSchemaVersionIsRefusedWithTheWayOut) {
  TempDir dir("sonde-store");
  {
    IndexWriter w;
    ASSERT_EQ(w.open(dir.path()), "");
    ASSERT_EQ(w.finish(), "");
  }
  {
    SqliteDb db;
    ASSERT_EQ(db.open(dir / "index.sqlite", SQLITE_OPEN_READWRITE), "");
    ASSERT_EQ(db.exec("UPDATE meta SET value = '1' WHERE key = 'schema_version'"), "");
  }
  std::string error;
  EXPECT_EQ(SqliteStore::open(dir.path(), &error), nullptr);
  const std::string current = std::to_string(kIndexSchemaVersion);
  EXPECT_NE(error.find("index schema version 1, this sonde reads " + current), std::string::npos)
      << error;
  EXPECT_NE(error.find("sonde index"), std::string::npos) << error;
  IndexWriter w;
  const std::string refused = w.open(dir.path());
  EXPECT_NE(refused.find("index schema version 1, this sonde writes " + current), std::string::npos)
      << refused;
}

}  // namespace
}  // namespace sonde::store
