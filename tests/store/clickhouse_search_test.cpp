// Searches by start time in the ClickHouse store go through the
// trace_buckets summary (src/store/clickhouse_search.cpp): they must give
// the SQLite store's answers for traces spread over many buckets — pages
// that start and end inside buckets, ranges that cut buckets, filters the
// summary has columns for and filters it has not — and say when a count
// is an estimate; and searches longest first, through trace_durations.
// Against a real clickhouse-server on loopback.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "../format/format_test_support.hpp"
#include "clickhouse_compare.hpp"
#include "clickhouse_server.hpp"
#include "store/clickhouse_store.hpp"
#include "store/index_sink.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;

constexpr int64_t kBucketNs = int64_t{1} << 36;  // trace_buckets' width
constexpr int kTraces = 3000;

// Trace i starts 5 s after trace i - 1 (about 14 per bucket, 3000 over
// about 220 buckets), except for an empty stretch of ten buckets after
// trace 1500. Two root operations, two hosts, some failed, some invalid.
void write_traces(TraceIndex& index) {
  static const std::string roots[] = {"shop.Cart.checkout()", "shop.Search.find(String)"};
  static const std::string hosts[] = {"h1", "h2"};
  const int64_t base = 1'700'000'000'000'000'000 + 12'345;  // not on a bucket boundary
  for (int i = 0; i < kTraces; ++i) {
    const int64_t start = base + i * int64_t{5'000'000'000} + (i > 1500 ? 10 * kBucketNs : 0);
    analysis::Trace t;
    t.trace_id = 1000 + i;
    t.thread_id = i % 3;
    t.host = hosts[i % 2];
    t.parent_trace_id = t.trace_id;
    // Durations scattered (a multiplicative hash), not drifting with time.
    const int64_t duration =
        1'000'000 +
        static_cast<int64_t>((static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL >> 40) % 9'000'000);
    const bool failed = i % 11 == 0;
    t.executions.push_back({roots[(i / 3) % 2], "shop", t.host, start, start + duration, 0, 0,
                            false, false, "", -1, -1});
    t.executions.push_back({"shop.Db.query()", "shop.Db", t.host, start + 10, start + duration / 2,
                            1, 1, failed, false, failed ? "E: timeout" : "", -1, -1});
    if (i % 13 == 0) {
      analysis::InvalidTrace bad;
      bad.trace_id = t.trace_id;
      bad.closed_by = analysis::CloseCause::kTimeout;
      bad.problems.push_back({analysis::TraceProblemKind::kMissingAfterEvent, "x"});
      bad.partial = t;
      bad.partial.executions[0].tout = -1;
      index.add_invalid(bad, 1);
    } else {
      index.add(t, 1);
    }
  }
  ASSERT_EQ(index.finish(), "");
}

class ClickHouseSearch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new test::ClickHouseServer();
    dir_ = new TempDir("sonde-ch-search");
    if (!server_->error().empty()) return;
    url_ = server_->url("search");
    for (const std::string& out : {std::string(dir_->path()), url_}) {
      std::string error;
      auto index = open_trace_index(out, &error);
      ASSERT_NE(index, nullptr) << error;
      write_traces(*index);
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete server_;
  }
  void SetUp() override {
    ASSERT_EQ(server_->error(), "");
    std::string error;
    sqlite_ = SqliteStore::open(dir_->path(), &error);
    ASSERT_NE(sqlite_, nullptr) << error;
    clickhouse_ = ClickHouseStore::open(url_, &error);
    ASSERT_NE(clickhouse_, nullptr) << error;
  }
  void expect_same(const TraceQuery& q) {
    const TraceQueryResult want = sqlite_->find_traces(q), got = clickhouse_->find_traces(q);
    EXPECT_EQ(got.matched, want.matched);
    EXPECT_FALSE(got.matched_estimated);
    ASSERT_EQ(got.entries.size(), want.entries.size());
    for (size_t k = 0; k < want.entries.size(); ++k) {
      SCOPED_TRACE("entry " + std::to_string(k));
      test::expect_same_entry(got.entries[k], want.entries[k]);
    }
    EXPECT_EQ(clickhouse_->last_error(), "");
  }
  static test::ClickHouseServer* server_;
  static TempDir* dir_;
  static std::string url_;
  std::unique_ptr<SqliteStore> sqlite_;
  std::unique_ptr<ClickHouseStore> clickhouse_;
};
test::ClickHouseServer* ClickHouseSearch::server_ = nullptr;
TempDir* ClickHouseSearch::dir_ = nullptr;
std::string ClickHouseSearch::url_;

TEST_F(ClickHouseSearch, TheUisQueriesGiveTheSqliteStoresAnswers) {
  test::expect_same_answers(*sqlite_, *clickhouse_, "Cart");
}

// Both orders: longest first goes through trace_durations, reading only
// the rows above a duration bar.
TEST_F(ClickHouseSearch, PagesAcrossBucketsAndRangesThatCutThem) {
  const StoreInfo info = sqlite_->info();
  ASSERT_EQ(info.traces + info.invalid_traces, static_cast<uint64_t>(kTraces));
  const int64_t span = info.last_start - info.first_start;
  // Filters the summary counts exactly, and ones it only bounds.
  std::vector<analysis::TraceFilter> filters(6);
  filters[1].operation = "Search";
  filters[2].include_invalid = true;
  filters[3].only_invalid = true;
  filters[4].min_duration = 4'000'000, filters[4].max_duration = 6'000'000;
  filters[5].host = "h2", filters[5].only_failed = true;
  for (size_t f = 0; f < filters.size(); ++f) {
    for (const auto& [offset, limit] : std::vector<std::pair<size_t, size_t>>{{0, 1},
                                                                              {0, 100},
                                                                              {13, 5},
                                                                              {99, 40},
                                                                              {700, 300},
                                                                              {1400, 250},
                                                                              {2900, 500},
                                                                              {5000, 10},
                                                                              {0, 0}}) {
      for (const auto& [from, to] : std::vector<std::pair<int64_t, int64_t>>{
               {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()},
               {info.first_start + span / 3 + 7, info.first_start + 2 * span / 3 - 3},
               {info.first_start + span / 2, info.first_start + span / 2 + kBucketNs / 2},
               {info.last_start + 1, std::numeric_limits<int64_t>::max()}}) {
        SCOPED_TRACE("filter " + std::to_string(f) + ", offset " + std::to_string(offset) +
                     ", limit " + std::to_string(limit) + ", from " + std::to_string(from));
        for (const auto order : {analysis::TraceOrder::kStart, analysis::TraceOrder::kLongest}) {
          TraceQuery q;
          q.order = order;
          q.filter = filters[f];
          q.offset = offset;
          q.limit = limit;
          q.from_ns = from;
          q.to_ns = to;
          expect_same(q);
        }
      }
    }
  }
}

TEST_F(ClickHouseSearch, CountsPastTheExactLimitAreEstimatesAndSaySo) {
  // A duration band: the summary has no duration column, so past the
  // limit the count comes from a sample of buckets.
  TraceQuery q;
  q.filter.min_duration = 2'000'000;
  q.filter.max_duration = 8'000'000;
  q.limit = 20;
  q.exact_count_traces = 0;
  const TraceQueryResult exact = sqlite_->find_traces(q);
  ASSERT_FALSE(exact.matched_estimated);
  q.exact_count_traces = 100;
  const TraceQueryResult got = clickhouse_->find_traces(q);
  EXPECT_TRUE(got.matched_estimated);
  // Durations are scattered evenly over the traces, so every bucket
  // matches about the same share: the sample of 16 buckets (about 220
  // traces) estimates it within a tenth.
  EXPECT_NEAR(static_cast<double>(got.matched), static_cast<double>(exact.matched),
              static_cast<double>(exact.matched) / 10);
  // The page itself is exact.
  ASSERT_EQ(got.entries.size(), exact.entries.size());
  for (size_t k = 0; k < exact.entries.size(); ++k) {
    EXPECT_EQ(got.entries[k].trace_id, exact.entries[k].trace_id) << k;
  }
  // A range that cuts a bucket: past the limit, that bucket's part is its
  // share by time (about 14 traces a bucket here, so within one bucket).
  const StoreInfo info = sqlite_->info();
  TraceQuery cut;
  cut.from_ns = info.first_start + (info.last_start - info.first_start) / 3 + kBucketNs / 3;
  cut.limit = 5;
  cut.exact_count_traces = 0;
  const uint64_t cut_exact = sqlite_->find_traces(cut).matched;
  cut.exact_count_traces = 5;
  const TraceQueryResult cut_got = clickhouse_->find_traces(cut);
  EXPECT_TRUE(cut_got.matched_estimated);
  EXPECT_NEAR(static_cast<double>(cut_got.matched), static_cast<double>(cut_exact), 14.0);
  // Filters the summary has columns for are counted exactly at any size.
  TraceQuery by_root;
  by_root.filter.operation = "Cart";
  by_root.exact_count_traces = 1;
  const TraceQueryResult root = clickhouse_->find_traces(by_root);
  EXPECT_FALSE(root.matched_estimated);
  by_root.exact_count_traces = 0;
  EXPECT_EQ(root.matched, sqlite_->find_traces(by_root).matched);
  EXPECT_EQ(clickhouse_->last_error(), "");
}

}  // namespace
}  // namespace sonde::store
