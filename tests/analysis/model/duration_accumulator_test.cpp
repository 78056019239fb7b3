// The bounded-memory accumulator: exact while small (equal to summarize()),
// within its stated 1/256 relative error once it switches to the histogram,
// exact moments throughout, and merges that equal adding everything to one.
#include "analysis/model/duration_accumulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace sonde::analysis {
namespace {

std::vector<int64_t> lognormal_samples(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(9.0, 1.5);  // ~8 µs median, long tail
  std::vector<int64_t> v(n);
  for (auto& x : v) x = static_cast<int64_t>(dist(rng));
  return v;
}

TEST(DurationAccumulator, ExactWhileBelowTheLimitEqualsSummarize) {
  std::vector<int64_t> v = lognormal_samples(1000, 1);
  DurationAccumulator acc(1000);
  for (int64_t x : v) acc.add(x);
  ASSERT_TRUE(acc.exact());
  const DistributionSummary got = acc.summary();
  const DistributionSummary want = summarize(v);
  EXPECT_TRUE(got.exact_quantiles);
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.total, want.total);
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_DOUBLE_EQ(got.median, want.median);
  EXPECT_DOUBLE_EQ(got.p90, want.p90);
  EXPECT_DOUBLE_EQ(got.p99, want.p99);
  EXPECT_NEAR(got.stddev, want.stddev, want.stddev * 1e-9);
}

TEST(DurationAccumulator, HistogramQuantilesStayWithinTheStatedError) {
  std::vector<int64_t> v = lognormal_samples(200000, 2);
  DurationAccumulator acc(1024);
  for (int64_t x : v) acc.add(x);
  ASSERT_FALSE(acc.exact());
  const DistributionSummary got = acc.summary();
  const DistributionSummary want = summarize(v);
  EXPECT_FALSE(got.exact_quantiles);
  // Moments and extremes stay exact.
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.total, want.total);
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_NEAR(got.stddev, want.stddev, want.stddev * 1e-9);
  // Quantiles: within 1/256 of the exact value (plus one ns of rounding).
  for (auto [g, w] : {std::pair{got.median, want.median}, std::pair{got.p90, want.p90},
                      std::pair{got.p95, want.p95}, std::pair{got.p99, want.p99}}) {
    EXPECT_LE(std::abs(g - w), w / 256 + 1) << "got " << g << " want " << w;
  }
}

// A store that keeps bucket counts itself (the ClickHouse store's
// operation_buckets) answers as the accumulator: the same quantiles,
// counts and extremes from (bucket, count), total, min and max.
TEST(DurationAccumulator, FromHistogramAnswersAsTheAccumulatorFedTheSameValues) {
  std::vector<int64_t> v = lognormal_samples(100000, 3);
  v.push_back(-5);  // a hostile log's negative duration: bucket 0, exact minimum
  v.push_back(int64_t{1} << 52);
  DurationAccumulator fed(0);  // histogram from the first value
  std::map<size_t, uint64_t> counts;
  int64_t total = 0, min = v[0], max = v[0];
  for (int64_t x : v) {
    fed.add(x);
    ++counts[DurationAccumulator::histogram_bucket(x)];
    total += x;
    min = std::min(min, x);
    max = std::max(max, x);
  }
  ASSERT_FALSE(fed.exact());
  const DurationAccumulator built = DurationAccumulator::from_histogram(
      std::vector<std::pair<size_t, uint64_t>>(counts.begin(), counts.end()), total, min, max);
  EXPECT_FALSE(built.exact());
  EXPECT_EQ(built.count(), fed.count());
  for (double p : {0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    EXPECT_DOUBLE_EQ(built.quantile(p), fed.quantile(p)) << "p " << p;
  }
  const DistributionSummary a = built.summary(), b = fed.summary();
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_DOUBLE_EQ(a.mean, b.mean);
  // No buckets: an empty accumulator.
  EXPECT_EQ(DurationAccumulator::from_histogram({}, 0, 0, 0).count(), 0u);
}

TEST(DurationAccumulator, SmallValuesAreExactEvenInTheHistogram) {
  DurationAccumulator acc(4);
  for (int64_t x : {5, 5, 7, 9, 200, 200, 200, 255}) acc.add(x);
  ASSERT_FALSE(acc.exact());
  EXPECT_DOUBLE_EQ(acc.quantile(0.5), 104.5);  // h = 3.5: halfway between 9 and 200
  EXPECT_DOUBLE_EQ(acc.quantile(0.0), 5);
  EXPECT_DOUBLE_EQ(acc.quantile(1.0), 255);
}

TEST(DurationAccumulator, NegativeDurationsKeepExactMinimum) {
  DurationAccumulator acc(2);
  for (int64_t x : {-50, 10, 20, 30}) acc.add(x);
  EXPECT_EQ(acc.summary().min, -50);
  EXPECT_DOUBLE_EQ(acc.quantile(0.0), -50);
  EXPECT_EQ(acc.summary().total, 10);
}

TEST(DurationAccumulator, MergeEqualsAddingEverythingToOne) {
  const std::vector<int64_t> a = lognormal_samples(3000, 3);
  const std::vector<int64_t> b = lognormal_samples(5000, 4);
  for (size_t limit : {size_t{100000}, size_t{4000}, size_t{100}}) {
    DurationAccumulator left(limit), right(limit), all(limit);
    for (int64_t x : a) left.add(x), all.add(x);
    for (int64_t x : b) right.add(x), all.add(x);
    left.merge(right);
    const DistributionSummary m = left.summary();
    const DistributionSummary w = all.summary();
    EXPECT_EQ(m.count, w.count) << limit;
    EXPECT_EQ(m.total, w.total) << limit;
    EXPECT_EQ(m.min, w.min) << limit;
    EXPECT_EQ(m.max, w.max) << limit;
    EXPECT_EQ(m.exact_quantiles, w.exact_quantiles) << limit;
    EXPECT_DOUBLE_EQ(m.median, w.median) << limit;
    EXPECT_DOUBLE_EQ(m.p99, w.p99) << limit;
    EXPECT_NEAR(m.stddev, w.stddev, w.stddev * 1e-9) << limit;
  }
  DurationAccumulator empty, filled;
  filled.add(7);
  empty.merge(filled);
  EXPECT_EQ(empty.summary().total, 7);
  filled.merge(DurationAccumulator());
  EXPECT_EQ(filled.count(), 1u);
}

TEST(DurationAccumulator, HugeValuesDoNotOverflowTheHistogram) {
  DurationAccumulator acc(1);
  acc.add(int64_t{1} << 62);
  acc.add(std::numeric_limits<int64_t>::max() / 2);
  acc.add(3);
  EXPECT_EQ(acc.summary().max, int64_t{1} << 62);
  EXPECT_GT(acc.quantile(0.5), 1e18);
  EXPECT_EQ(acc.summary().total, std::numeric_limits<int64_t>::max());  // saturated, not wrapped
}

void expect_same_summary(const DistributionSummary& got, const DistributionSummary& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.total, want.total);
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_EQ(got.exact_quantiles, want.exact_quantiles);
  EXPECT_DOUBLE_EQ(got.median, want.median);
  EXPECT_DOUBLE_EQ(got.p90, want.p90);
  EXPECT_DOUBLE_EQ(got.p99, want.p99);
  EXPECT_DOUBLE_EQ(got.stddev, want.stddev);
}

TEST(DurationAccumulator, ASavedStateLoadsAndGoesOnAsIfNeverSaved) {
  const std::vector<int64_t> first = lognormal_samples(3000, 5);
  const std::vector<int64_t> then = lognormal_samples(2000, 6);
  // Exact before and after; exact before and a histogram after; a histogram throughout.
  for (size_t limit : {size_t{100000}, size_t{4000}, size_t{100}}) {
    SCOPED_TRACE(limit);
    DurationAccumulator kept(limit), all(limit);
    for (int64_t x : first) kept.add(x), all.add(x);
    std::string state;
    kept.save(state);
    DurationAccumulator loaded;
    ASSERT_TRUE(loaded.load(state));
    expect_same_summary(loaded.summary(), kept.summary());
    for (int64_t x : then) loaded.add(x), all.add(x);
    expect_same_summary(loaded.summary(), all.summary());
  }
  // Empty, and extreme values.
  std::string state;
  DurationAccumulator().save(state);
  DurationAccumulator empty;
  ASSERT_TRUE(empty.load(state));
  EXPECT_EQ(empty.count(), 0u);
  DurationAccumulator extremes(1);
  for (int64_t x :
       {std::numeric_limits<int64_t>::min(), int64_t{0}, std::numeric_limits<int64_t>::max()}) {
    extremes.add(x);
  }
  state.clear();
  extremes.save(state);
  DurationAccumulator back;
  ASSERT_TRUE(back.load(state));
  expect_same_summary(back.summary(), extremes.summary());
}

TEST(DurationAccumulator, DamagedStatesAreRefusedAndChangeNothing) {
  DurationAccumulator exact, histogram(10);
  for (int64_t x : lognormal_samples(50, 7)) exact.add(x), histogram.add(x);
  std::string good_exact, good_histogram;
  exact.save(good_exact);
  histogram.save(good_histogram);
  DurationAccumulator target;
  target.add(42);
  for (const std::string& good : {good_exact, good_histogram}) {
    // Every cut is refused; so is a byte too many.
    for (size_t n = 0; n < good.size(); ++n) {
      EXPECT_FALSE(target.load(std::string_view(good).substr(0, n))) << n;
    }
    EXPECT_FALSE(target.load(good + '\0'));
    // Flipping any one byte yields a refusal or a state that agrees with
    // itself; it never crashes or leaves `target` half-changed.
    for (size_t i = 0; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x55);
      DurationAccumulator probe;
      probe.add(42);
      if (!probe.load(bad)) {
        EXPECT_EQ(probe.count(), 1u) << i;
      }
    }
  }
  EXPECT_EQ(target.count(), 1u);
  EXPECT_EQ(target.summary().total, 42);
  EXPECT_FALSE(target.load("\x02"));  // another version
}

}  // namespace
}  // namespace sonde::analysis

namespace sonde::analysis {
namespace {

// A bucket's lowest value (the ClickHouse store's longest-first search
// reads the rows at least that long): in the bucket, and the bucket below
// ends just under it, from the linear range to the largest durations.
TEST(DurationAccumulatorBuckets, EachBucketsLowestValueStartsIt) {
  std::vector<int64_t> values = {0,
                                 1,
                                 255,
                                 256,
                                 257,
                                 511,
                                 512,
                                 1000,
                                 123'456'789,
                                 int64_t{1} << 40,
                                 std::numeric_limits<int64_t>::max()};
  for (int64_t v = 1; v < (int64_t{1} << 62); v = v * 3 + 1) values.push_back(v);
  for (const int64_t v : values) {
    SCOPED_TRACE(v);
    const size_t b = DurationAccumulator::histogram_bucket(v);
    const int64_t low = DurationAccumulator::histogram_bucket_low(b);
    EXPECT_LE(low, v);
    EXPECT_EQ(DurationAccumulator::histogram_bucket(low), b);
    if (low > 0) {
      EXPECT_EQ(DurationAccumulator::histogram_bucket(low - 1), b - 1);
    }
  }
}

}  // namespace
}  // namespace sonde::analysis
