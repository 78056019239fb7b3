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

// Normal approximation with tie correction and continuity correction; sound
// for n1, n2 >= 8 or so. Either sample empty: p = 1. The inputs need not be
// sorted; they are copied.
RankTestResult mann_whitney(std::span<const int64_t> first, std::span<const int64_t> second);

// Holm-Bonferroni: adjusted p-values in input order (monotone, capped at 1).
std::vector<double> holm_adjust(std::span<const double> p);

}  // namespace sonde::analysis
