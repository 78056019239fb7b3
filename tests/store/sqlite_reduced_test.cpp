// SqliteStore's reader of reduced traces: what a reducing sink
// (ReducingIndexSink, as `sonde collect --reduce` uses) stored for a
// workload whose every figure follows from its parameters
// (reduced_workload.hpp) comes back through find_reduced() and
// reduced_trace(), filtered, ordered and paged; a damaged BLOB is named.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "../format/format_test_support.hpp"
#include "reduced_workload.hpp"
#include "store/index_writer.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;
using test::ReducedWorkload;

// Writes the workload through a reducing sink into DIR; returns the store.
std::unique_ptr<SqliteStore> reduced_store(const std::string& dir, const ReducedWorkload& w) {
  IndexWriter writer;
  EXPECT_EQ(writer.open(dir), "");
  analysis::ReductionOptions options;
  options.window_ns = ReducedWorkload::kWindow;
  ReducingIndexSink sink(writer, 1, options);
  int64_t id = 1;
  for (int b = 0; b < w.bursts; ++b) {
    for (int i = 0; i < w.per_burst; ++i) sink.on_trace(ReducedWorkload::trace(b, i, id++));
  }
  sink.flush();
  EXPECT_EQ(static_cast<int64_t>(sink.valid()), w.traces());
  EXPECT_EQ(writer.finish(), "");
  std::string error;
  auto store = SqliteStore::open(dir, &error);
  EXPECT_NE(store, nullptr) << error;
  return store;
}

class ReducedStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("sonde-reduced");
    store_ = reduced_store(dir_->path(), workload_).release();
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
  }
  static std::vector<ReducedEntry> all(ReducedQuery q) {
    q.limit = 1000;
    const ReducedQueryResult r = store_->find_reduced(q);
    EXPECT_EQ(r.error, "");
    EXPECT_TRUE(r.supported);
    EXPECT_EQ(r.matched, r.entries.size());
    return r.entries;
  }
  inline static ReducedWorkload workload_;
  inline static TempDir* dir_ = nullptr;
  inline static SqliteStore* store_ = nullptr;
};

TEST_F(ReducedStore, InfoCountsReducedRowsAndTheTracesTheyStandFor) {
  const StoreInfo info = store_->info();
  EXPECT_EQ(info.reduced_traces, workload_.rows().size());
  EXPECT_EQ(info.reduced_from_traces, static_cast<uint64_t>(workload_.traces()));
  EXPECT_EQ(info.traces, 0u);  // no trace stored one by one
  EXPECT_EQ(info.first_start, ReducedWorkload::start_of(0, 0));
  EXPECT_EQ(info.last_start,
            ReducedWorkload::start_of(workload_.bursts - 1, workload_.per_burst - 1));
  EXPECT_EQ(info.hosts, (std::vector<std::string>{"h1", "h2"}));
}

TEST_F(ReducedStore, EveryRowHoldsItsWindowsCountsAndTimes) {
  ReducedQuery q;
  q.order = ReducedOrder::kStart;
  const auto got = all(q);
  const auto want = workload_.rows();
  ASSERT_EQ(got.size(), want.size());
  uint64_t total = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    const ReducedEntry& e = got[k];
    const auto& r = want[k];
    EXPECT_EQ(e.root_operation, ReducedWorkload::kRoots[static_cast<size_t>(r.shape)]) << k;
    EXPECT_EQ(e.host, ReducedWorkload::kHosts[static_cast<size_t>(r.shape)]) << k;
    EXPECT_EQ(e.traces, r.traces) << k;
    EXPECT_EQ(e.failed_traces, r.failed) << k;
    EXPECT_EQ(e.first_start, r.first_start) << k;
    EXPECT_EQ(e.last_start, r.last_start) << k;
    EXPECT_EQ(e.min_duration, r.min) << k;
    EXPECT_EQ(e.max_duration, r.max) << k;
    EXPECT_DOUBLE_EQ(e.mean_duration, r.mean) << k;
    total += e.traces;
  }
  EXPECT_EQ(total, static_cast<uint64_t>(workload_.traces()));
}

TEST_F(ReducedStore, FiltersSelectByOperationHostWindowAndCount) {
  const auto want = workload_.rows();
  const auto count_where = [&](auto pred) {
    uint64_t rows = 0, traces = 0;
    for (const auto& r : want) {
      if (pred(r)) ++rows, traces += r.traces;
    }
    return std::pair(rows, traces);
  };
  const auto sum = [](const std::vector<ReducedEntry>& es) {
    return std::pair(static_cast<uint64_t>(es.size()), [&] {
      uint64_t n = 0;
      for (const auto& e : es) n += e.traces;
      return n;
    }());
  };
  ReducedQuery by_op;
  by_op.operation = "Front.show";
  EXPECT_EQ(sum(all(by_op)), count_where([](const auto& r) { return r.shape == 1; }));
  ReducedQuery by_host;
  by_host.host = "h2";
  EXPECT_EQ(sum(all(by_host)), count_where([](const auto& r) { return r.shape == 2; }));
  ReducedQuery no_host;
  no_host.host = "h";  // exact, not a substring
  EXPECT_TRUE(all(no_host).empty());
  ReducedQuery second_burst;
  second_burst.from_ns = ReducedWorkload::start_of(1, 0);
  second_burst.to_ns = ReducedWorkload::start_of(1, workload_.per_burst - 1);
  EXPECT_EQ(sum(all(second_burst)), count_where([](const auto& r) { return r.burst == 1; }));
  ReducedQuery big;
  const uint64_t threshold = want[1].traces;  // shape 1's count: shapes 0 and 1 pass
  big.min_count = threshold;
  EXPECT_EQ(sum(all(big)), count_where([&](const auto& r) { return r.traces >= threshold; }));
}

TEST_F(ReducedStore, CountOrderAndPagingAreStable) {
  const auto by_count = all(ReducedQuery{});
  ASSERT_EQ(by_count.size(), workload_.rows().size());
  for (size_t k = 1; k < by_count.size(); ++k) {
    const auto &a = by_count[k - 1], &b = by_count[k];
    EXPECT_TRUE(a.traces > b.traces || (a.traces == b.traces && a.first_start <= b.first_start))
        << k;
  }
  ReducedQuery page;
  page.limit = 4;
  page.offset = 2;
  const ReducedQueryResult r = store_->find_reduced(page);
  EXPECT_EQ(r.matched, by_count.size());
  ASSERT_EQ(r.entries.size(), 4u);
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(r.entries[k].id, by_count[k + 2].id) << k;
  ReducedQuery past;
  past.offset = by_count.size();
  EXPECT_TRUE(store_->find_reduced(past).entries.empty());
}

TEST_F(ReducedStore, OneReducedTraceHasItsCallPositions) {
  ReducedQuery q;
  q.order = ReducedOrder::kStart;
  const auto entries = all(q);
  const auto want = workload_.rows();
  for (size_t k = 0; k < entries.size(); ++k) {
    const ReducedTraceLookup found = store_->reduced_trace(entries[k].id);
    ASSERT_EQ(found.error, "");
    ASSERT_TRUE(found.trace.has_value()) << k;
    EXPECT_EQ(found.trace->entry.traces, entries[k].traces);
    const auto& xs = found.trace->executions;
    const auto& r = want[k];
    ASSERT_EQ(xs.size(), 1u + static_cast<size_t>(ReducedWorkload::children_of(r.shape))) << k;
    EXPECT_EQ(xs[0].operation, ReducedWorkload::kRoots[static_cast<size_t>(r.shape)]);
    EXPECT_EQ(xs[0].ess, 0);
    EXPECT_EQ(xs[0].mean_duration, static_cast<double>(std::llround(r.mean)));
    for (size_t c = 1; c < xs.size(); ++c) {
      EXPECT_EQ(xs[c].operation, ReducedWorkload::kChild);
      EXPECT_EQ(xs[c].component, ReducedWorkload::kComponent);
      EXPECT_EQ(xs[c].eoi, static_cast<int32_t>(c));
      EXPECT_EQ(xs[c].ess, 1);
      EXPECT_EQ(xs[c].mean_duration, static_cast<double>(std::llround(r.child_mean[c - 1])))
          << k << " " << c;
      EXPECT_EQ(xs[c].failed, c == 1 ? r.failed : 0u);
    }
  }
  const ReducedTraceLookup none = store_->reduced_trace(1'000'000);
  EXPECT_FALSE(none.trace.has_value());
  EXPECT_EQ(none.error, "");
}

TEST(SqliteReducedStore, ADamagedBlobIsNamedWithRowAndOffset) {
  TempDir dir("sonde-reduced");
  ReducedWorkload w;
  w.bursts = 1;
  auto store = reduced_store(dir.path(), w);
  ASSERT_NE(store, nullptr);
  {
    SqliteDb db;
    ASSERT_EQ(db.open(dir / "index.sqlite", SQLITE_OPEN_READWRITE), "");
    // Row 1: a position cut short; row 2: a name id the names table lacks.
    ASSERT_EQ(db.exec("UPDATE reduced_traces SET data = x'0102' WHERE id = 1"), "");
    ASSERT_EQ(db.exec("UPDATE reduced_traces SET data = x'007F' WHERE id = 2"), "");
  }
  const ReducedTraceLookup cut = store->reduced_trace(1);
  EXPECT_FALSE(cut.trace.has_value());
  EXPECT_NE(cut.error.find("reduced trace row 1: truncated position 0 (starts at byte 0)"),
            std::string::npos)
      << cut.error;
  const ReducedTraceLookup unknown = store->reduced_trace(2);
  EXPECT_FALSE(unknown.trace.has_value());
  EXPECT_NE(unknown.error.find("reduced trace row 2: unknown name id 127 at byte 1"),
            std::string::npos)
      << unknown.error;
  // The list does not read the BLOBs: it still answers.
  EXPECT_EQ(store->find_reduced(ReducedQuery{}).matched, w.rows().size());
}

}  // namespace
}  // namespace sonde::store
