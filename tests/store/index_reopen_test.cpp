// Reopening an index to append (a restarted collector, `sonde index` into
// an existing directory): a clean close saves the operations' statistics
// state, so that reopening loads it instead of reading every stored
// execution again; a stale or damaged saved state falls back to the
// rebuild. Either way the statistics after appending equal those of one
// writer that saw every trace.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../format/format_test_support.hpp"
#include "clickhouse_compare.hpp"
#include "store/index_writer.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;
using test::expect_same_operations;

// Traces of root() and one child each; more than DurationAccumulator's
// exact limit of root() calls, so its statistics move to the histogram.
std::vector<analysis::Trace> make_traces(size_t n) {
  static const std::vector<std::string> children = {"a()", "b()", "c()"};
  std::mt19937_64 random(11);
  std::vector<analysis::Trace> traces;
  int64_t t = 1'000'000;
  for (size_t i = 0; i < n; ++i) {
    analysis::Trace trace;
    trace.trace_id = static_cast<int64_t>(i + 1);
    trace.thread_id = 1;
    trace.parent_trace_id = trace.trace_id;
    trace.host = "h";
    const auto length = static_cast<int64_t>(100 + random() % 100'000);
    const bool failed = random() % 10 == 0;
    trace.executions.push_back({"root()", "R", "h", t, t + length, 0, 0, false, false, "", -1, -1});
    trace.executions.push_back({children[random() % 3], "C", "h", t + 10, t + 10 + length / 2, 1, 1,
                                failed, false, failed ? "E" : "", -1, -1});
    traces.push_back(std::move(trace));
    t += 1000;
  }
  return traces;
}

void write_traces(const std::string& dir, const std::vector<analysis::Trace>& traces, size_t from,
                  size_t to) {
  IndexWriter w;
  ASSERT_EQ(w.open(dir), "");
  for (size_t i = from; i < to; ++i) w.add(traces[i], 0);
  ASSERT_EQ(w.finish(), "");
}

// (caller, callee) -> calls, as the store reads them.
std::map<std::pair<std::string, std::string>, uint64_t> stored_edges(const std::string& dir) {
  std::string error;
  auto store = SqliteStore::open(dir, &error);
  EXPECT_NE(store, nullptr) << error;
  std::map<std::pair<std::string, std::string>, uint64_t> edges;
  if (!store) return edges;
  for (const CallEdge& e : store->call_edges()) edges[{e.caller, e.callee}] += e.calls;
  return edges;
}

std::vector<OperationStats> stored_operations(const std::string& dir) {
  std::string error;
  auto store = SqliteStore::open(dir, &error);
  EXPECT_NE(store, nullptr) << error;
  return store ? store->operations() : std::vector<OperationStats>{};
}

void run_sql(const std::string& dir, const std::string& sql) {
  SqliteDb db;
  ASSERT_EQ(db.open(dir + "/index.sqlite", SQLITE_OPEN_READWRITE), "");
  ASSERT_EQ(db.exec(sql), "");
}

constexpr size_t kFirst = 20'000, kAll = 30'000;

TEST(IndexReopen, ACleanCloseSavesTheStatisticsAndReopeningUsesThem) {
  const std::vector<analysis::Trace> traces = make_traces(kAll);
  TempDir once("sonde-once"), twice("sonde-twice");
  write_traces(once.path(), traces, 0, kAll);
  write_traces(twice.path(), traces, 0, kFirst);
  // With every stored execution unreadable, only the saved state can give
  // the statistics: a rebuild would fail (see the next test).
  run_sql(twice.path(), "UPDATE trace_batches SET executions = x'00'");
  write_traces(twice.path(), traces, kFirst, kAll);
  const std::vector<OperationStats> want = stored_operations(once.path());
  ASSERT_EQ(want.size(), 4u);
  ASSERT_EQ(want[0].operation, "root()");
  ASSERT_EQ(want[0].count, kAll);
  expect_same_operations(stored_operations(twice.path()), want);
}

// The writer keeps its call edges by name id: reopening maps the stored
// edges' names back to their ids, and appending adds to them.
TEST(IndexReopen, CallEdgesAfterAppendingAreOneWritersEdges) {
  const std::vector<analysis::Trace> traces = make_traces(kAll);
  TempDir once("sonde-once"), twice("sonde-twice");
  write_traces(once.path(), traces, 0, kAll);
  write_traces(twice.path(), traces, 0, kFirst);
  write_traces(twice.path(), traces, kFirst, kAll);
  const auto want = stored_edges(once.path());
  ASSERT_EQ(want.size(), 4u);  // entry -> root(), root() -> a(), b(), c()
  EXPECT_EQ(want.at({"", "root()"}), kAll);
  uint64_t children = 0;
  for (const char* child : {"a()", "b()", "c()"}) children += want.at({"root()", child});
  EXPECT_EQ(children, kAll);
  EXPECT_EQ(stored_edges(twice.path()), want);
}

TEST(IndexReopen, AStaleSavedStateIsRebuiltFromTheExecutions) {
  const std::vector<analysis::Trace> traces = make_traces(kFirst);
  TempDir dir("sonde-stale");
  write_traces(dir.path(), traces, 0, kFirst);
  // As after a crash that followed more commits: the state is from an
  // older generation, so the writer reads the executions.
  run_sql(dir.path(), "UPDATE meta SET value = '1' WHERE key = 'statistics_generation'");
  run_sql(dir.path(), "UPDATE trace_batches SET executions = x'00' WHERE id = 2");
  IndexWriter w;
  const std::string e = w.open(dir.path());
  EXPECT_NE(e.find("batch row 2: executions"), std::string::npos) << e;
}

TEST(IndexReopen, ADamagedSavedStateFallsBackToTheRebuild) {
  const std::vector<analysis::Trace> traces = make_traces(kAll);
  TempDir once("sonde-once"), twice("sonde-twice");
  write_traces(once.path(), traces, 0, kAll);
  write_traces(twice.path(), traces, 0, kFirst);
  run_sql(twice.path(), "UPDATE operation_state SET state = x'01' WHERE operation = 'a()'");
  write_traces(twice.path(), traces, kFirst, kAll);
  expect_same_operations(stored_operations(twice.path()), stored_operations(once.path()));
  // An operation missing from the saved state also means a rebuild.
  run_sql(twice.path(), "DELETE FROM operation_state WHERE operation = 'b()'");
  write_traces(twice.path(), traces, kAll, kAll);
  expect_same_operations(stored_operations(twice.path()), stored_operations(once.path()));
}

}  // namespace
}  // namespace sonde::store
