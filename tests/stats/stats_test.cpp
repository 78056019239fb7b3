// The statistics library against published values (sources in comments).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "stats/binomial.hpp"
#include "stats/descriptive.hpp"
#include "stats/erlang.hpp"
#include "stats/percentile.hpp"
#include "stats/position_test.hpp"
#include "stats/regression.hpp"
#include "stats/t_test.hpp"

namespace sonde::stats {
namespace {

// R's `sleep` data set (Cushny & Peebles), extra hours of sleep per group.
const std::vector<double> kSleep1 = {0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
const std::vector<double> kSleep2 = {1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};

TEST(Percentile, MatchesRType7) {
  const std::vector<double> x = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};  // 1..10 unsorted
  // R: quantile(1:10, c(0, .25, .5, .9, 1)) = 1, 3.25, 5.5, 9.1, 10
  EXPECT_DOUBLE_EQ(percentile(x, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(x, 0.25), 3.25);
  EXPECT_DOUBLE_EQ(percentile(x, 0.5), 5.5);
  EXPECT_NEAR(percentile(x, 0.9), 9.1, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(x, 1), 10);
  EXPECT_TRUE(std::isnan(percentile(std::vector<double>{}, 0.5)));
}

TEST(Percentile, DurationsInNanosecondsUseTheSameDefinition) {
  const std::vector<int64_t> v = {10, 20, 40};  // sorted
  EXPECT_DOUBLE_EQ(percentile_sorted(std::span<const int64_t>(v), 0.0), 10);
  EXPECT_DOUBLE_EQ(percentile_sorted(std::span<const int64_t>(v), 1.0), 40);
  EXPECT_DOUBLE_EQ(percentile_sorted(std::span<const int64_t>(v), 0.5), 20);
  EXPECT_DOUBLE_EQ(percentile_sorted(std::span<const int64_t>(v), 0.75), 30);  // h = 1.5
  EXPECT_DOUBLE_EQ(percentile_sorted(std::span<const int64_t>(v), 0.9), 36);   // h = 1.8
  EXPECT_TRUE(std::isnan(percentile_sorted(std::span<const int64_t>(), 0.5)));
  // Large values keep their precision: the interpolation is done in double
  // from the two neighbours, not from a sum.
  const std::vector<int64_t> big = {4'000'000'000'000, 4'000'000'000'010};
  EXPECT_DOUBLE_EQ(percentile_sorted(std::span<const int64_t>(big), 0.5), 4'000'000'000'005.0);
}

TEST(Percentile, SelectionInPlaceAgreesWithSorting) {
  // R: quantile(c(7, 1, 9, 3, 5, 2), c(.1, .25, .5, .9)) = 1.5, 2.25, 4, 8
  const std::vector<int64_t> data = {7, 1, 9, 3, 5, 2};
  for (const double p : {0.0, 0.1, 0.25, 0.5, 0.9, 1.0}) {
    std::vector<int64_t> work = data;
    std::vector<int64_t> sorted = data;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_DOUBLE_EQ(percentile_in_place(work, p),
                     percentile_sorted(std::span<const int64_t>(sorted), p))
        << "p " << p;
  }
  std::vector<int64_t> work = data;
  EXPECT_DOUBLE_EQ(percentile_in_place(work, 0.1), 1.5);
  work = data;
  EXPECT_DOUBLE_EQ(percentile_in_place(work, 0.25), 2.25);
  work = data;
  EXPECT_DOUBLE_EQ(percentile_in_place(work, 0.9), 8);
  std::vector<int64_t> none;
  EXPECT_TRUE(std::isnan(percentile_in_place(none, 0.5)));
}

TEST(MiddleValue, IsTheUpperMiddleOrderStatistic) {
  EXPECT_EQ(stats::middle_value({4, 1, 3, 2}), 3.0);  // percentile(0.5) would say 2.5
  EXPECT_EQ(stats::middle_value({5, 1, 3}), 3.0);
  EXPECT_EQ(stats::middle_value({7}), 7.0);
  EXPECT_EQ(stats::middle_value({}), 0.0);
}

TEST(Bimodality, MatchesTheCoefficientOfTheBiasCorrectedMoments) {
  // {1, 2, 3, 4, 10, 10}: sample skewness G1 = 0.703125 and excess kurtosis
  // G2 = -1.8640625 (the SAS/SPSS estimators, worked from the mean 5 and
  // the central moments 40/3, 25 and 802/3 with n = 6), so
  // (G1^2 + 1) / (G2 + 3 * 5^2 / (4 * 3)).
  const std::vector<int64_t> x = {1, 2, 3, 4, 10, 10};
  const double g1 = 0.703125, g2 = -1.8640625;
  EXPECT_NEAR(stats::bimodality_coefficient(x), (g1 * g1 + 1) / (g2 + 75.0 / 12), 1e-12);
  EXPECT_EQ(stats::bimodality_coefficient(std::vector<int64_t>{1, 2, 3}), 0.0);
  EXPECT_EQ(stats::bimodality_coefficient(std::vector<int64_t>(5, 4)), 0.0);
}

TEST(MeanInterval, MatchesRTTest) {
  // R: t.test(sleep$extra[1:10]) -> mean 0.75, 95% CI -0.5297804 2.0297804
  const Interval ci = mean_confidence_interval(kSleep1, 0.05);
  EXPECT_NEAR(ci.estimate, 0.75, 1e-12);
  EXPECT_NEAR(ci.low, -0.5297804, 1e-6);
  EXPECT_NEAR(ci.high, 2.0297804, 1e-6);
}

TEST(StudentT, MatchesTables) {
  // R: pt(2, 5) = 0.9490303; qt(0.975, 10) = 2.228139; symmetry pt(-t) = 1 - pt(t).
  EXPECT_NEAR(student_t_cdf(2, 5), 0.9490303, 1e-7);
  EXPECT_NEAR(student_t_cdf(-2, 5), 1 - 0.9490303, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228139, 1e-6);
  // Exact: I_0.5(2, 3) = P(Binomial(4, 0.5) >= 2) = 11/16.
  EXPECT_NEAR(incomplete_beta(2, 3, 0.5), 0.6875, 1e-12);
}

TEST(WelchTTest, MatchesRSleepExample) {
  // R: t.test(extra ~ group, data = sleep) (Welch):
  //    t = -1.8608, df = 17.776, p-value = 0.07939 (group 1 minus group 2)
  const TTestResult r = welch_t_test(kSleep1, kSleep2);
  ASSERT_TRUE(r.valid);
  EXPECT_NEAR(r.t, 1.8608, 1e-4);  // ours is b - a
  EXPECT_NEAR(r.df, 17.776, 1e-3);
  EXPECT_NEAR(r.p_two_sided, 0.07939, 1e-5);
  EXPECT_NEAR(r.p_greater, 0.07939 / 2, 1e-5);
  EXPECT_FALSE(welch_t_test(std::vector<double>{1}, kSleep2).valid);
}

TEST(Regression, MatchesAnscombeQuartetI) {
  // Anscombe (1973), data set I: y = 3.00 + 0.500 x, R^2 = 0.667.
  const std::vector<double> x = {10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5};
  const std::vector<double> y = {8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68};
  const LinearFit f = linear_regression(x, y);
  ASSERT_TRUE(f.valid);
  EXPECT_NEAR(f.slope, 0.5001, 1e-4);
  EXPECT_NEAR(f.intercept, 3.0001, 1e-4);
  EXPECT_NEAR(f.r_squared, 0.6665, 1e-4);
  // R's summary(lm(y1 ~ x1, anscombe)): Std. Error 0.1179, Pr(>|t|) 0.00217.
  EXPECT_NEAR(f.slope_stderr, 0.1179, 1e-4);
  EXPECT_NEAR(f.p_slope_positive, 0.00217 / 2, 1e-5);
  // Falling: the same data mirrored is no evidence of a rise.
  std::vector<double> mirrored(x.size());
  for (size_t i = 0; i < x.size(); ++i) mirrored[i] = -x[i];
  EXPECT_NEAR(linear_regression(mirrored, y).p_slope_positive, 1 - 0.00217 / 2, 1e-5);
  EXPECT_FALSE(linear_regression(std::vector<double>{1, 1}, std::vector<double>{1, 2}).valid);
}

TEST(Spearman, MatchesPublishedValues) {
  // Anscombe data set I: Spearman's rho = 0.8182 (9/11).
  const std::vector<double> x = {10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5};
  const std::vector<double> y = {8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68};
  EXPECT_NEAR(spearman_rho(x, y), 9.0 / 11.0, 1e-9);
  // Ties get midranks: ranks (1.5, 1.5, 3.5, 3.5) against 1..4, r = 4 / sqrt(20).
  EXPECT_NEAR(spearman_rho(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 1, 2, 2}),
              4 / std::sqrt(20.0), 1e-12);
  // Any strictly monotone shape is +-1; a constant or too short series is 0.
  EXPECT_NEAR(
      spearman_rho(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{1, 8, 27, 64, 125}), 1,
      1e-12);
  EXPECT_NEAR(spearman_rho(std::vector<double>{1, 2, 3}, std::vector<double>{9, 4, 1}), -1, 1e-12);
  EXPECT_EQ(spearman_rho(std::vector<double>{1, 2, 3}, std::vector<double>{5, 5, 5}), 0);
  EXPECT_EQ(spearman_rho(std::vector<double>{1, 2}, std::vector<double>{1, 2}), 0);
  EXPECT_EQ(spearman_rho(std::vector<double>{1, 2, 3}, std::vector<double>{1, NAN, 3}), 0);
}

TEST(Binomial, UpperTailMatchesR) {
  // R: pbinom(2, 10, 0.2, lower = FALSE) = 0.3222005;
  // binom.test(9, 10, alternative = "greater")$p.value = 11/1024;
  // pbinom(7, 10, 0.5, lower = FALSE) = 56/1024.
  EXPECT_NEAR(stats::binomial_upper_tail(3, 10, 0.2), 0.3222005, 1e-7);
  EXPECT_NEAR(stats::binomial_upper_tail(9, 10, 0.5), 11.0 / 1024, 1e-12);
  EXPECT_NEAR(stats::binomial_upper_tail(8, 10, 0.5), 56.0 / 1024, 1e-12);
  EXPECT_NEAR(stats::binomial_upper_tail(10, 10, 0.3), std::pow(0.3, 10), 1e-15);
}

TEST(Binomial, UpperTailAtItsBounds) {
  EXPECT_EQ(stats::binomial_upper_tail(0, 10, 0.2), 1);
  EXPECT_EQ(stats::binomial_upper_tail(0, 0, 0.2), 1);
  EXPECT_EQ(stats::binomial_upper_tail(11, 10, 0.2), 0);
  EXPECT_EQ(stats::binomial_upper_tail(1, 10, 0), 0);
  EXPECT_EQ(stats::binomial_upper_tail(10, 10, 1), 1);
}

TEST(ErlangC, MatchesTextbookValues) {
  // One server: C = utilization (M/M/1 waiting probability).
  EXPECT_NEAR(erlang_c(1, 0.7), 0.7, 1e-12);
  // c = 2, a = 1: (a^2/2 * 2) / (1 + a + a^2/2 * 2) = 1/3.
  EXPECT_NEAR(erlang_c(2, 0.5), 1.0 / 3, 1e-12);
  // c = 5, a = 4 (u = 0.8): 42.667 / 77 = 0.5541 (Kleinrock, Queueing Systems I, M/M/m).
  EXPECT_NEAR(erlang_c(5, 0.8), 0.55411, 1e-5);
  EXPECT_DOUBLE_EQ(erlang_c(4, 1.0), 1);
  // M/M/1: R = D / (1 - u): factor 1/(1-0.5) = 2 at u = 0.5, so the inverse gives 0.5.
  EXPECT_NEAR(response_time_factor(1, 0.5), 2, 1e-12);
  EXPECT_NEAR(utilization_for_rt_factor(2, 1), 0.5, 1e-9);
  // More servers tolerate more utilization for the same slowdown.
  EXPECT_GT(utilization_for_rt_factor(2, 8), utilization_for_rt_factor(2, 2));
  // OLB threshold: single server, u = 0.5, D = 10, tolerance 1: 10 * 0.5 / 0.5 + 10 = 20.
  EXPECT_NEAR(olb_threshold(10, 1, 0.5, 1.0), 20, 1e-12);
}

TEST(Bootstrap, IntervalCoversMeanAndIsDeterministic) {
  const Interval a = bootstrap_mean_interval(kSleep2, 0.05, 2000, 7);
  const Interval b = bootstrap_mean_interval(kSleep2, 0.05, 2000, 7);
  EXPECT_DOUBLE_EQ(a.low, b.low);
  EXPECT_NEAR(a.estimate, 2.33, 1e-12);
  EXPECT_LT(a.low, 2.33);
  EXPECT_GT(a.high, 2.33);
  // Narrower than the data range, wider than nothing.
  EXPECT_GT(a.low, -0.1);
  EXPECT_LT(a.high, 5.5);
}

TEST(BatchMeans, SplitsIntoEqualBatches) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7};  // last value dropped with 3 batches of 2
  const std::vector<double> m = batch_means(x, 3);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_DOUBLE_EQ(m[0], 1.5);
  EXPECT_DOUBLE_EQ(m[2], 5.5);
}

// Ten batches of two whose means alternate 0 and 2: their standard
// deviation is sqrt(10/9), so the mean's error is sqrt(10/9)/sqrt(10) = 1/3
// with 9 degrees of freedom. Fewer than two values per batch: no batch
// error.
TEST(BatchMeans, ErrorOfTheMeanFromTheBatches) {
  std::vector<double> x;
  for (int b = 0; b < 10; ++b) x.insert(x.end(), 2, b % 2 == 0 ? 0.0 : 2.0);
  const MeanError e = batch_mean_error(x);
  EXPECT_NEAR(e.se, 1.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(e.df, 9);
  x.pop_back();
  EXPECT_DOUBLE_EQ(batch_mean_error(x).df, 0);
}

// Too short for batch means (fewer than two values per batch): the error
// of independent values, s / sqrt(n) with n - 1 degrees of freedom.
TEST(BatchMeans, AShortSeriesFallsBackToTheErrorOfItsValues) {
  const std::vector<double> x = {1, 2, 3};
  const MeanError e = series_mean_error(x);
  EXPECT_NEAR(e.se, 1 / std::sqrt(3.0), 1e-12);
  EXPECT_DOUBLE_EQ(e.df, 2);
  EXPECT_DOUBLE_EQ(series_mean_error(std::vector<double>{1}).df, 0);
}

// Two means with errors of 1 on 9 degrees of freedom each: the difference
// has an error of sqrt(2) on 18 degrees of freedom (Welch-Satterthwaite:
// 2^2 / (1/9 + 1/9)), and t(0.975, 18) = 2.1009 (tables), so a difference
// of 2.1009 sqrt(2) has a one-sided p of 0.025. Equal means: 0.5. The two
// directions add to 1. No error at all: the means decide.
TEST(WelchFromErrors, CombinesTheErrorsAndTheirDegreesOfFreedom) {
  const MeanError e{1, 9};
  EXPECT_NEAR(p_greater(0, e, 2.1009 * std::sqrt(2.0), e), 0.025, 1e-4);
  EXPECT_NEAR(p_greater(3, e, 3, e), 0.5, 1e-12);
  const MeanError wide{2, 4};
  EXPECT_NEAR(p_greater(1, e, 2.5, wide) + p_greater(2.5, wide, 1, e), 1, 1e-12);
  EXPECT_DOUBLE_EQ(p_greater(1, {}, 2, {}), 0);
  EXPECT_DOUBLE_EQ(p_greater(2, {}, 1, {}), 1);
}

// Two marks of ten at the end: exactly 2 of the C(10,2) = 45 placements
// are as far off-centre ({8, 9} and {0, 1}), so the exact p is 2/45.
TEST(PositionTest, MatchesTheExactPermutationPValue) {
  std::vector<bool> marked(10, false);
  marked[8] = marked[9] = true;
  const PositionTest t = position_test(marked);
  ASSERT_TRUE(t.valid);
  EXPECT_NEAR(t.p_value, 2.0 / 45.0, 0.01);
  EXPECT_DOUBLE_EQ(t.mean_position, 8.5 / 9.0);
  // The same placement at the start is as far off-centre.
  std::vector<bool> first(10, false);
  first[0] = first[1] = true;
  EXPECT_NEAR(position_test(first).p_value, t.p_value, 0.01);
  EXPECT_DOUBLE_EQ(position_test(first).mean_position, 0.5 / 9.0);
}

TEST(PositionTest, MarksPiledAtOneEndAreATrendSpreadOnesAreNot) {
  std::vector<bool> late(40, false), spread(40, false);
  for (int i = 33; i < 40; ++i) late[i] = true;
  for (int i = 3; i < 40; i += 6) spread[i] = true;
  EXPECT_LT(position_test(late).p_value, 0.001);
  EXPECT_GT(position_test(spread).p_value, 0.5);
}

TEST(PositionTest, NoMarkOrOnlyMarksIsNoTest) {
  EXPECT_FALSE(position_test(std::vector<bool>(5, false)).valid);
  EXPECT_FALSE(position_test(std::vector<bool>(5, true)).valid);
  EXPECT_FALSE(position_test({}).valid);
  EXPECT_EQ(position_test(std::vector<bool>(5, true)).p_value, 1.0);
}

}  // namespace
}  // namespace sonde::stats
