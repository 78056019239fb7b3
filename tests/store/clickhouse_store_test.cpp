// The ClickHouse store against a real clickhouse-server (Debian's package,
// started on loopback on a free port with a temporary data directory): it
// gives the same answers as the SQLite store for the same traces — the
// bookstore log, and hand-made traces with failures, invalid traces and
// hostile strings (tabs, newlines, quotes, backslashes, markup).
#include "store/clickhouse_store.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../format/format_test_support.hpp"
#include "clickhouse_compare.hpp"
#include "clickhouse_server.hpp"
#include "store/clickhouse_writer.hpp"
#include "store/index_build.hpp"
#include "store/index_sink.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;
using format::test::testdata;

class ClickHouse : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new test::ClickHouseServer(); }
  static void TearDownTestSuite() { delete server_; }
  void SetUp() override { ASSERT_EQ(server_->error(), ""); }
  static test::ClickHouseServer* server_;

  // The bookstore log indexed into `dir` and into database `name`; the
  // database's URL.
  static std::string index_bookstore_in_both(const TempDir& dir, const std::string& name) {
    const std::string log = testdata("kieker/bookstore-oer-2010/log");
    EXPECT_EQ(build_index_from_log(log, dir.path()).error, "");
    const std::string url = server_->url(name);
    EXPECT_EQ(build_index_from_log(log, url).error, "");
    return url;
  }
  static ClickHouseUrl parsed(const std::string& url) {
    ClickHouseUrl out;
    EXPECT_EQ(parse_clickhouse_url(url, &out), "");
    return out;
  }
};
test::ClickHouseServer* ClickHouse::server_ = nullptr;

std::unique_ptr<SqliteStore> sqlite(const std::string& dir) {
  std::string error;
  auto s = SqliteStore::open(dir, &error);
  EXPECT_NE(s, nullptr) << error;
  return s;
}

std::unique_ptr<ClickHouseStore> clickhouse(const std::string& url) {
  std::string error;
  auto s = ClickHouseStore::open(url, &error);
  EXPECT_NE(s, nullptr) << error;
  return s;
}

TEST_F(ClickHouse, BookstoreGivesTheSameAnswersAsSqlite) {
  const std::string log = testdata("kieker/bookstore-oer-2010/log");
  TempDir dir("sonde-store");
  ASSERT_EQ(build_index_from_log(log, dir.path()).error, "");
  const std::string url = server_->url("bookstore");
  ASSERT_EQ(build_index_from_log(log, url).error, "");
  auto a = sqlite(dir.path());
  auto b = clickhouse(url);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->info().traces, 1635u);
  test::expect_same_answers(*a, *b, "searchBook");
  EXPECT_EQ(b->last_error(), "");
}

TEST_F(ClickHouse, FailedInvalidAndHostileStringsRoundTrip) {
  const std::string hostile = "<script>alert('x')</script>\t\"q\"\\n\nline2 \\ end";
  // Hosts are views of string literals or of `hostile`: a Trace keeps views.
  auto make = [&](int64_t id, int64_t start, bool fail, std::string_view host) {
    analysis::Trace t;
    t.trace_id = id;
    t.thread_id = id % 3;
    t.host = host;
    t.parent_trace_id = id;
    t.executions.push_back(
        {"root()", "R", host, start, start + 1000 + id, 0, 0, false, false, "", -1, -1});
    t.executions.push_back({hostile, "C'", host, start + 10, start + 50 + id, 1, 1, fail, false,
                            fail ? std::string_view(hostile) : std::string_view(), -1, -1});
    t.executions.push_back(
        {"leaf()", "L", host, start + 60, start + 70, 2, 1, false, false, "", -1, -1});
    return t;
  };
  TempDir dir("sonde-store");
  const std::string url = server_->url("handmade");
  for (const std::string& out : {dir.path(), url}) {
    std::string error;
    auto index = open_trace_index(out, &error);
    ASSERT_NE(index, nullptr) << error;
    for (int64_t i = 0; i < 60; ++i) {
      index->add(make(i, 1'000'000 + i * 100'000, i % 7 == 0,
                      i % 2 ? std::string_view("h1") : std::string_view(hostile)),
                 1);
    }
    // The same trace id twice (two processes).
    index->add(make(5, 9'000'000, false, "h2"), 2);
    analysis::InvalidTrace bad;
    bad.trace_id = 99;
    bad.closed_by = analysis::CloseCause::kTimeout;
    bad.problems.push_back({analysis::TraceProblemKind::kMissingAfterEvent, hostile});
    bad.partial = make(99, 5'000'000, false, "h1");
    bad.partial.executions[0].tout = -1;
    index->add_invalid(bad, 1);
    ASSERT_EQ(index->finish(), "");
  }
  auto a = sqlite(dir.path());
  auto b = clickhouse(url);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->info().invalid_traces, 1u);
  EXPECT_EQ(b->trace(5).size(), 2u);
  TraceQuery q;
  q.filter.host = hostile;
  EXPECT_EQ(b->find_traces(q).matched, 30u);
  q.filter.host.clear();
  q.filter.operation = hostile;
  EXPECT_EQ(b->find_traces(q).matched, 0u);  // the hostile name is never a root
  const auto failed = b->trace(7);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].executions[1].operation, hostile);
  EXPECT_EQ(failed[0].executions[1].cause, hostile);
  test::expect_same_answers(*a, *b, "root");
  EXPECT_EQ(b->last_error(), "");
}

// A database written before the call-edge table existed: read by counting
// executions, then given the table (filled from the executions) by the
// next collector that opens it; the dependency graph is the same all along.
TEST_F(ClickHouse, ADatabaseWithoutTheCallEdgeTableIsReadThenUpgraded) {
  TempDir dir("sonde-store-edges");
  const std::string url = index_bookstore_in_both(dir, "before_edges");
  ClickHouseClient client(parsed(url));
  ASSERT_FALSE(HasFailure());
  for (const char* table : {"call_edges", "operation_buckets", "trace_buckets", "trace_durations",
                            "traces_by_duration"}) {
    ASSERT_EQ(client.query(std::string("DROP TABLE ") + table + "_mv"), "");
    ASSERT_EQ(client.query(std::string("DROP TABLE ") + table), "");
  }
  auto want = sqlite(dir.path())->call_edges();
  ASSERT_FALSE(want.empty());
  const auto same = [&](const std::vector<CallEdge>& got) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].caller, want[i].caller);
      EXPECT_EQ(got[i].callee, want[i].callee);
      EXPECT_EQ(got[i].calls, want[i].calls);
    }
  };
  same(clickhouse(url)->call_edges());
  // Searches by start time read the traces table as before the summaries.
  test::expect_same_answers(*sqlite(dir.path()), *clickhouse(url), "searchBook");

  // The summaries of the trace rows are filled in slices of start time:
  // here of about 100 of the 1,635 traces each (seventeen INSERTs if
  // they are spread evenly), whose rows must add up to every trace once.
  ClickHouseWriter writer(parsed(url));
  writer.set_fill_slice_traces(100);
  ASSERT_EQ(writer.open(), "");
  ASSERT_EQ(writer.finish(), "");
  std::string rows;
  ASSERT_EQ(client.query("SELECT sum(calls) FROM call_edges", &rows), "");
  uint64_t calls = 0;
  for (const CallEdge& e : want) calls += e.calls;
  EXPECT_EQ(rows, std::to_string(calls) + "\n");
  auto upgraded = clickhouse(url);
  same(upgraded->call_edges());
  // The trace buckets were filled too: searches through them.
  test::expect_same_answers(*sqlite(dir.path()), *upgraded, "searchBook");
  ASSERT_EQ(client.query("SELECT countMerge(traces) FROM trace_buckets", &rows), "");
  EXPECT_EQ(rows, "1635\n");
  // The copy ordered by duration was filled too, with every trace row.
  ASSERT_EQ(client.query("SELECT count() FROM traces_by_duration", &rows), "");
  std::string traces;
  ASSERT_EQ(client.query("SELECT count() FROM traces", &traces), "");
  EXPECT_EQ(rows, traces);
  // The duration histogram was filled too: the statistics from it.
  upgraded->set_exact_operations_limit(0);
  EXPECT_EQ(upgraded->operations().size(), sqlite(dir.path())->operations().size());
  EXPECT_EQ(upgraded->last_error(), "");
}

// The searches' summaries are trusted only once their fill completed: one
// cut short (here: emptied, its completion mark gone) is not read, and the
// next writer makes it again.
TEST_F(ClickHouse, ASummaryWhoseFillWasCutShortIsNotTrustedThenRemade) {
  TempDir dir("sonde-store-cut-fill");
  const std::string url = index_bookstore_in_both(dir, "cut_fill");
  ClickHouseClient client(parsed(url));
  ASSERT_FALSE(HasFailure());
  for (const char* sql :
       {"DROP TABLE trace_buckets_mv", "RENAME TABLE trace_buckets TO trace_buckets_old",
        "CREATE TABLE trace_buckets AS trace_buckets_old", "DROP TABLE trace_buckets_old",
        "DROP TABLE summaries_filled"}) {
    ASSERT_EQ(client.query(sql), "") << sql;
  }
  auto sqlite_store = sqlite(dir.path());
  test::expect_same_answers(*sqlite_store, *clickhouse(url), "searchBook");

  std::string error;
  auto writer = open_trace_index(url, &error);
  ASSERT_NE(writer, nullptr) << error;
  ASSERT_EQ(writer->finish(), "");
  std::string rows;
  ASSERT_EQ(client.query("SELECT countMerge(traces) FROM trace_buckets", &rows), "");
  EXPECT_EQ(rows, "1635\n");
  ASSERT_EQ(client.query("SELECT name FROM summaries_filled ORDER BY name", &rows), "");
  // Every one lost its mark with the table: each was made again.
  EXPECT_EQ(rows, "trace_buckets\ntrace_durations\ntraces_by_duration\n");
  test::expect_same_answers(*sqlite_store, *clickhouse(url), "searchBook");
}

// A search longest first reads its page from the copy of the trace rows
// ordered by duration, and only once the copy is marked whole. Here the
// copy is given a row `traces` lacks, longer than any trace: it leads
// the page while the mark is there, and not once the mark is gone.
TEST_F(ClickHouse, LongestFirstReadsTheDurationOrderedCopyOnlyOnceItIsWhole) {
  TempDir dir("sonde-store-by-duration");
  const std::string url = index_bookstore_in_both(dir, "by_duration");
  ClickHouseClient client(parsed(url));
  ASSERT_FALSE(HasFailure());
  auto sqlite_store = sqlite(dir.path());
  TraceQuery q;
  q.order = analysis::TraceOrder::kLongest;
  q.limit = 5;
  const TraceQueryResult want = sqlite_store->find_traces(q);
  ASSERT_EQ(want.entries.size(), 5u);
  const TraceQueryResult whole = clickhouse(url)->find_traces(q);
  ASSERT_EQ(whole.entries.size(), 5u);
  for (size_t i = 0; i < 5; ++i) test::expect_same_entry(want.entries[i], whole.entries[i]);

  // Only the copy gets the row: the view copies inserts into `traces`.
  ASSERT_EQ(
      client.query("INSERT INTO traces_by_duration VALUES (999999, 424242, 'planted()', " +
                   std::to_string(want.entries[0].start) + ", " +
                   std::to_string(want.entries[0].duration * 10) + ", '', 1, 0, 1, 0, 1, '')"),
      "");
  const TraceQueryResult from_copy = clickhouse(url)->find_traces(q);
  ASSERT_EQ(from_copy.entries.size(), 5u);
  EXPECT_EQ(from_copy.entries[0].trace_id, 424242);
  EXPECT_EQ(from_copy.entries[1].trace_id, want.entries[0].trace_id);

  // Without its mark (a fill cut short) the copy is not read.
  for (const char* sql : {"DROP TABLE summaries_filled",
                          "CREATE TABLE summaries_filled (name String) ENGINE = MergeTree() "
                          "ORDER BY name",
                          "INSERT INTO summaries_filled VALUES ('trace_buckets'), "
                          "('trace_durations')"}) {
    ASSERT_EQ(client.query(sql), "") << sql;
  }
  const TraceQueryResult without = clickhouse(url)->find_traces(q);
  ASSERT_EQ(without.entries.size(), 5u);
  for (size_t i = 0; i < 5; ++i) test::expect_same_entry(want.entries[i], without.entries[i]);
}

// Past the exact limit the operation statistics come from the duration
// histogram the view keeps: counts, failures, mean, min and max as the
// embedded store's, percentiles within its 1/256 (the bookstore's
// operations have fewer than 16,384 executions each, so the embedded
// store's are exact).
TEST_F(ClickHouse, OperationStatisticsFromTheHistogramStayWithinItsError) {
  TempDir dir("sonde-store-buckets");
  const std::string url = index_bookstore_in_both(dir, "buckets");
  ASSERT_FALSE(HasFailure());
  auto b = clickhouse(url);
  ASSERT_NE(b, nullptr);
  b->set_exact_operations_limit(0);
  const auto got = b->operations();
  const auto want = sqlite(dir.path())->operations();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(want[i].operation);
    EXPECT_EQ(got[i].operation, want[i].operation);
    EXPECT_EQ(got[i].count, want[i].count);
    EXPECT_EQ(got[i].failed, want[i].failed);
    EXPECT_DOUBLE_EQ(got[i].mean, want[i].mean);
    EXPECT_EQ(got[i].min, want[i].min);
    EXPECT_EQ(got[i].max, want[i].max);
    for (auto [g, w] : {std::pair{got[i].p50, want[i].p50}, std::pair{got[i].p90, want[i].p90},
                        std::pair{got[i].p95, want[i].p95}, std::pair{got[i].p99, want[i].p99}}) {
      EXPECT_LE(std::abs(g - w), w / 256 + 1) << "got " << g << " want " << w;
    }
  }
  EXPECT_EQ(b->last_error(), "");
}

TEST_F(ClickHouse, BadUrlsAndMissingTablesAreNamed) {
  std::string error;
  EXPECT_EQ(ClickHouseStore::open("clickhouse://127.0.0.1/", &error), nullptr);
  EXPECT_NE(error.find("clickhouse://HOST[:PORT]/DATABASE"), std::string::npos) << error;
  EXPECT_EQ(ClickHouseStore::open("clickhouse://127.0.0.1:1/db", &error), nullptr);
  EXPECT_NE(error.find("127.0.0.1:1"), std::string::npos) << error;
  EXPECT_EQ(ClickHouseStore::open(server_->url("empty"), &error), nullptr);
  EXPECT_NE(error.find("no sonde tables"), std::string::npos) << error;
  EXPECT_EQ(ClickHouseStore::open("clickhouse://127.0.0.1:8123/bad-name;", &error), nullptr);
  EXPECT_NE(error.find("database name"), std::string::npos) << error;
}

}  // namespace
}  // namespace sonde::store
