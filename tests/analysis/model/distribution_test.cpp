// Quantiles (type 7: linear interpolation between closest ranks), mean,
// sample standard deviation, and duration formatting.
#include "analysis/model/distribution.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/text/duration_format.hpp"

namespace sonde::analysis {
namespace {

TEST(Distribution, QuantilesInterpolateBetweenClosestRanks) {
  // 1..10: h = 9p. Values as R's quantile(type = 7) / numpy.percentile give.
  std::vector<int64_t> v = {7, 3, 10, 1, 5, 2, 9, 4, 8, 6};  // unsorted on purpose
  const DistributionSummary s = summarize(v);
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.total, 55);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_NEAR(s.p90, 9.1, 1e-12);
  EXPECT_NEAR(s.p95, 9.55, 1e-12);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  EXPECT_EQ(v.front(), 1);  // sorted in place
}

TEST(Distribution, SampleStandardDeviation) {
  std::vector<int64_t> v = {2, 4, 4, 4, 5, 5, 7, 9};  // population sd 2, sample sd sqrt(32/7)
  const DistributionSummary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.stddev, 2.1380899352993950, 1e-12);
  std::vector<int64_t> one = {42};
  const DistributionSummary single = summarize(one);
  EXPECT_EQ(single.stddev, 0);
  EXPECT_EQ(single.median, 42);
  EXPECT_EQ(single.p99, 42);
  std::vector<int64_t> none;
  EXPECT_EQ(summarize(none).count, 0u);
}

TEST(Distribution, TotalsStayExactForLargeValues) {
  std::vector<int64_t> v = {1'000'000'000'000'000'001, 1'000'000'000'000'000'002};
  EXPECT_EQ(summarize(v).total, 2'000'000'000'000'000'003);
}

TEST(DurationFormat, PicksAUnitWithThreeSignificantDigits) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(812), "812 ns");
  EXPECT_EQ(format_duration(999.4), "999 ns");
  EXPECT_EQ(format_duration(999.6), "1.00 µs");
  EXPECT_EQ(format_duration(3420), "3.42 µs");
  EXPECT_EQ(format_duration(12'345'678), "12.3 ms");
  EXPECT_EQ(format_duration(123'456'789), "123 ms");
  EXPECT_EQ(format_duration(1.25e9), "1.25 s");
  EXPECT_EQ(format_duration(4821e9), "4821 s");
  EXPECT_EQ(format_duration(-2500), "-2.50 µs");
}

}  // namespace
}  // namespace sonde::analysis

namespace sonde::analysis {
namespace {

TEST(DurationParse, UnitsAndRejects) {
  int64_t ns = -1;
  EXPECT_TRUE(parse_duration("250", &ns));
  EXPECT_EQ(ns, 250);
  EXPECT_TRUE(parse_duration("3.5us", &ns));
  EXPECT_EQ(ns, 3500);
  EXPECT_TRUE(parse_duration("3.5µs", &ns));
  EXPECT_EQ(ns, 3500);
  EXPECT_TRUE(parse_duration("12ms", &ns));
  EXPECT_EQ(ns, 12'000'000);
  EXPECT_TRUE(parse_duration("1.5s", &ns));
  EXPECT_EQ(ns, 1'500'000'000);
  EXPECT_TRUE(parse_duration("2m", &ns));
  EXPECT_EQ(ns, 120'000'000'000);
  ns = 7;
  for (const char* bad : {"", "ms", ".", "1.2.3", "-5ms", "5 ms", "5h", "1e3", "99999999999s"}) {
    EXPECT_FALSE(parse_duration(bad, &ns)) << bad;
  }
  EXPECT_EQ(ns, 7);
}

}  // namespace
}  // namespace sonde::analysis
