// Segments of constant rate in a 0/1 sequence, and the exact test that
// decides each split.
#include "stats/rate_segments.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sonde::stats {
namespace {

std::vector<bool> sequence(std::size_t n, bool (*hit)(std::size_t)) {
  std::vector<bool> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = hit(i);
  return out;
}

// The segments cover the sequence in order, each with its own hits.
void expect_partition(const std::vector<bool>& x, const std::vector<RateSegment>& s) {
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.front().begin, 0u);
  EXPECT_EQ(s.back().end, x.size());
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k > 0) {
      EXPECT_EQ(s[k].begin, s[k - 1].end) << k;
    }
    std::size_t hits = 0;
    for (std::size_t i = s[k].begin; i < s[k].end; ++i) hits += x[i] ? 1 : 0;
    EXPECT_EQ(s[k].hits, hits) << k;
  }
}

TEST(FisherExact, MatchesTheTeaTastingTable) {
  // Fisher's tea-tasting design: 8 cups, 4 with milk first, 4 picked.
  // R: fisher.test(matrix(c(4, 0, 0, 4), 2))$p.value = 0.02857 (2 / 70);
  // fisher.test(matrix(c(3, 1, 1, 3), 2))$p.value = 0.4857 (34 / 70).
  EXPECT_NEAR(fisher_exact_two_sided(8, 4, 4, 4), 2.0 / 70, 1e-12);
  EXPECT_NEAR(fisher_exact_two_sided(8, 4, 4, 3), 34.0 / 70, 1e-12);
  // The lower tail by symmetry: none of the 4 picked.
  EXPECT_NEAR(fisher_exact_two_sided(8, 4, 4, 0), 2.0 / 70, 1e-12);
  // At the mean: capped at 1.
  EXPECT_DOUBLE_EQ(fisher_exact_two_sided(8, 4, 4, 2), 1.0);
  // Impossible tables.
  EXPECT_DOUBLE_EQ(fisher_exact_two_sided(8, 4, 4, 5), 0.0);
  EXPECT_DOUBLE_EQ(fisher_exact_two_sided(8, 6, 4, 1), 0.0);  // at least 2 must be hits
}

TEST(FisherExact, ARunOfFourAmongAThousandIsItsHypergeometricProbability) {
  // 4 drawn, all hits, of 1000 items with 100 hits: the only table as
  // extreme, 100 * 99 * 98 * 97 / (1000 * 999 * 998 * 997), doubled.
  const double p = 100.0 * 99 * 98 * 97 / (1000.0 * 999 * 998 * 997);
  EXPECT_NEAR(fisher_exact_two_sided(1000, 100, 4, 4), 2 * p, 1e-15);
}

TEST(RateSegments, AConstantSequenceIsOneSegment) {
  EXPECT_TRUE(rate_segments({}, 0.05).empty());
  for (bool (*hit)(std::size_t) :
       {+[](std::size_t) { return false; }, +[](std::size_t) { return true; },
        +[](std::size_t i) { return i % 10 == 0; }}) {
    const auto s = rate_segments(sequence(1000, hit), 0.05);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].begin, 0u);
    EXPECT_EQ(s[0].end, 1000u);
  }
  EXPECT_EQ(rate_segments(sequence(1000, [](std::size_t i) { return i % 10 == 0; }), 0.05)[0].hits,
            100u);
}

TEST(RateSegments, AStepInTheRateSplitsNearTheStep) {
  // 2% (every 50th) for 500 items, then 50% (every other).
  const auto x = sequence(1000, [](std::size_t i) { return i < 500 ? i % 50 == 0 : i % 2 == 0; });
  const auto s = rate_segments(x, 0.05);
  ASSERT_EQ(s.size(), 2u);
  expect_partition(x, s);
  EXPECT_NEAR(static_cast<double>(s[0].end), 500, 5);
  // 10 of the first 500 are hits, so a cut near 500 leaves about 10 left.
  EXPECT_NEAR(static_cast<double>(s[0].hits), 10, 2);
}

TEST(RateSegments, BurstsBecomeTheirOwnSegmentsExactly) {
  // Three runs of 20 hits on a background of every 50th item. No single
  // cut separates them from the time between them; the stretch search does.
  const auto x = sequence(2000, [](std::size_t i) {
    for (std::size_t b : {300u, 1000u, 1700u})
      if (i >= b && i < b + 20) return true;
    return i % 50 == 25;
  });
  const auto s = rate_segments(x, 0.05);
  expect_partition(x, s);
  std::vector<std::size_t> bursts;
  for (const RateSegment& g : s) {
    if (g.hits == g.end - g.begin && g.hits == 20) {
      bursts.push_back(g.begin);
    } else {
      // The rest is background (a segment may end at a background hit
      // next to a burst, where the search placed the stretch's end).
      EXPECT_LT(static_cast<double>(g.hits), 0.2 * static_cast<double>(g.end - g.begin))
          << g.begin << ".." << g.end;
    }
  }
  EXPECT_EQ(bursts, (std::vector<std::size_t>{300, 1000, 1700}));
}

// A run of 4 hits that opens 1000 items at about 10%: the chi-squared
// approximation of the likelihood ratio would cut it off (p 1.9e-5 x 999
// cuts = 0.019 < alpha / 2), although such a run occurs somewhere in about
// 9% of such sequences by chance; the exact test (p 0.21 after the
// factor) leaves it in.
TEST(RateSegments, AShortRunAtTheBackgroundRateIsNoSegment) {
  const auto s = rate_segments(
      sequence(1000, [](std::size_t i) { return i < 4 || (i >= 10 && i % 10 == 3); }), 0.05);
  EXPECT_EQ(s.size(), 1u);
}

// Under one rate, every cut is a false alarm; Bonferroni over the
// candidates keeps the chance of one per sequence at or below alpha. Here
// 1000 sequences of 1000 items at 10% (raw engine output, the same draw
// with every standard library): at a rate of exactly alpha, 50 +- 7 would
// be cut; more than 65 says the level is not kept. (This draw: 1. The
// Bonferroni bound is loose, the price of assuming nothing about the
// maximally selected statistic.)
TEST(RateSegments, ASequenceOfOneRateIsCutAtMostAtTheLevel) {
  std::mt19937_64 random(7);
  int cut = 0;
  for (int k = 0; k < 1000; ++k) {
    std::vector<bool> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = random() % 10 == 0;
    const auto s = rate_segments(x, 0.05);
    expect_partition(x, s);
    cut += s.size() > 1;
  }
  EXPECT_LE(cut, 65);
}

}  // namespace
}  // namespace sonde::stats
