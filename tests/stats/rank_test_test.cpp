// Mann-Whitney U against values worked out by hand. The p-value case is
// the formula R's wilcox.test(x, y, exact = FALSE, correct = TRUE) uses
// (normal approximation, tie and continuity correction).
#include "stats/rank_test.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sonde::stats {
namespace {

TEST(MannWhitney, CountsPairsAndTiesHalf) {
  const std::vector<double> a = {1, 2, 3}, b = {2, 4};
  // Pairs a > b: (3>2) = 1; ties: (2=2) = 1/2 -> U = 1.5 of 6 pairs.
  const auto r = mann_whitney(a, b);
  EXPECT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.u, 1.5);
  EXPECT_DOUBLE_EQ(r.common_language, 0.25);
  EXPECT_LT(r.z, 0);
}

TEST(MannWhitney, SeparatedSamplesAreSignificantInTheRightDirection) {
  std::vector<double> slow, fast;
  for (int i = 0; i < 20; ++i) {
    fast.push_back(100 + i);
    slow.push_back(200 + i);
  }
  const auto r = mann_whitney(slow, fast);
  EXPECT_DOUBLE_EQ(r.u, 400.0);
  EXPECT_DOUBLE_EQ(r.common_language, 1.0);
  // No ties: sigma = sqrt(20 * 20 * 41 / 12) = 36.968..., z = 200 / sigma.
  EXPECT_NEAR(r.z, 5.4100, 1e-4);
  EXPECT_LT(r.p_greater, 1e-6);
  EXPECT_GT(r.p_less, 0.999);
  EXPECT_LT(r.p_two_sided, 1e-6);
}

TEST(MannWhitney, MatchesRsNormalApproximation) {
  // R: wilcox.test(c(1.83,0.50,1.62,2.48,1.68,1.88,1.55,3.06,1.30),
  //                c(0.878,0.647,0.598,2.05,1.06,1.29,1.06,3.14,1.29),
  //                exact = FALSE): W = 58, p = 0.1329 (ties: 1.06 and
  //                1.29 appear twice in y).
  const std::vector<double> x = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
  const std::vector<double> y = {0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
  const auto r = mann_whitney(x, y);
  EXPECT_DOUBLE_EQ(r.u, 58.0);
  EXPECT_NEAR(r.p_two_sided, 0.1329, 5e-4);
}

TEST(MannWhitney, IdenticalOrEmptySamplesAreNotValid) {
  const std::vector<double> same = {5, 5, 5}, empty;
  EXPECT_FALSE(mann_whitney(same, same).valid);
  EXPECT_FALSE(mann_whitney(same, empty).valid);
  EXPECT_DOUBLE_EQ(mann_whitney(same, same).p_two_sided, 1.0);
}

TEST(MannWhitney, NormalCdfKnownValues) {
  EXPECT_NEAR(normal_cdf(0), 0.5, 1e-12);
  EXPECT_NEAR(normal_cdf(1.959964), 0.975, 1e-6);
  EXPECT_NEAR(normal_cdf(-1.644854), 0.05, 1e-6);
}

}  // namespace
}  // namespace sonde::stats
