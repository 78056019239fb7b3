// The Mann-Whitney U (Wilcoxon rank-sum) test: does one sample tend to be
// larger than the other? Response times are skewed and heavy-tailed, so a
// rank test is the right default where a t-test's normality assumption does
// not hold; it compares whole distributions, not means. Used by the
// calling-context baseline check (stratified) and the diagnosis heuristics.
//
// Method: midranks for ties; U = R_1 - n_1(n_1 + 1)/2; the normal
// approximation with tie correction
//   sigma^2 = n_1 n_2 / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1)))
// and a continuity correction of 0.5 in each tail. Sound for n_1, n_2 >= 8
// or so; smaller samples get the same formula (documented, not exact).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sonde::stats {

struct RankTestResult {
  double u = 0;            // U of the first sample (pairs where it is larger; ties count 1/2)
  double z = 0;            // standardised U, > 0 when the first sample tends to be larger
  double p_greater = 1;    // one-sided: the first sample is stochastically larger
  double p_less = 1;       // one-sided: the first sample is stochastically smaller
  double p_two_sided = 1;  // min(1, 2 · min(p_greater, p_less))
  // Effect size U / (n_1 n_2): P(X_1 > X_2) + P(X_1 = X_2)/2; 0.5 = no effect.
  double common_language = 0.5;
  bool valid = false;  // false when a sample is empty or every value is equal
};

// U of `first` against `second`, its mean and variance under the null
// hypothesis (tie-corrected): the parts a stratified test combines. The
// inputs need not be sorted; they are copied.
struct RankSums {
  double u = 0, mean = 0, variance = 0;
  double n1 = 0, n2 = 0;
};
RankSums rank_sums(std::span<const double> first, std::span<const double> second);
RankSums rank_sums(std::span<const int64_t> first, std::span<const int64_t> second);

// The test of `first` against `second`. Either sample empty: p = 1.
RankTestResult mann_whitney(std::span<const double> first, std::span<const double> second);
RankTestResult mann_whitney(std::span<const int64_t> first, std::span<const int64_t> second);

// Van Elteren's stratified rank test: each stratum compares like with
// like, and the strata's U statistics are combined with weights
// 1 / (n1 + n2 + 1), so a shift in how many observations each stratum has
// is not mistaken for a shift in the distributions. Continuity correction
// only when a single stratum has data: then it is exactly `mann_whitney`.
RankTestResult stratified_rank_test(std::span<const RankSums> strata);

// Holm-Bonferroni: adjusted p-values in input order (monotone, capped at 1).
std::vector<double> holm_adjust(std::span<const double> p);

// Standard normal cumulative distribution function.
double normal_cdf(double z);

}  // namespace sonde::stats
