// The Mann-Whitney U (Wilcoxon rank-sum) test: does one sample tend to
// take longer than the other? Response times are skewed and heavy-tailed,
// so a rank test is the right default; it compares whole distributions,
// not means.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sonde::analysis {

struct RankTestResult {
  double u = 0;                // U of the first sample (pairs where it is larger; ties count 1/2)
  double z = 0;                // normal approximation, > 0 when the first sample is larger
  double p_greater = 1;        // one-sided: the first sample is stochastically larger
  double p_less = 1;           // one-sided: the first sample is stochastically smaller
  double p_two_sided = 1;      // min(1, 2 · min(p_greater, p_less))
  double common_language = 0;  // U / (n1 n2): P(X1 > X2) + P(X1 = X2)/2
};

// U of `first` against `second`, its mean and variance under the null
// hypothesis (tie-corrected); the parts a stratified test combines.
struct RankSums {
  double u = 0, mean = 0, variance = 0;
  double n1 = 0, n2 = 0;
};
RankSums rank_sums(std::span<const int64_t> first, std::span<const int64_t> second);

// Normal approximation with tie correction and continuity correction; sound
// for n1, n2 >= 8 or so. Either sample empty: p = 1. The inputs need not be
// sorted; they are copied.
RankTestResult mann_whitney(std::span<const int64_t> first, std::span<const int64_t> second);

// Van Elteren's stratified rank test: each stratum compares like with
// like, and the strata's U statistics are combined with weights
// 1 / (n1 + n2 + 1), so a shift in how many observations each stratum has
// is not mistaken for a shift in the distributions. Continuity correction
// only when a single stratum has data: then it is exactly `mann_whitney`.
RankTestResult stratified_rank_test(std::span<const RankSums> strata);

// Holm-Bonferroni: adjusted p-values in input order (monotone, capped at 1).
std::vector<double> holm_adjust(std::span<const double> p);

}  // namespace sonde::analysis
