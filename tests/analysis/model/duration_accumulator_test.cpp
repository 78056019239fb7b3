// The bounded-memory accumulator: exact while small (equal to summarize()),
// within its stated 1/256 relative error once it switches to the histogram,
// exact moments throughout, and merges that equal adding everything to one.
#include "analysis/model/duration_accumulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
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

}  // namespace
}  // namespace sonde::analysis
