// Mann-Whitney U test (Wilcoxon rank-sum): do two samples come from the same
// distribution, or does one tend to be larger? Used where timing samples are
// skewed and heavy-tailed (response times), so a t-test's normality
// assumption does not hold: the calling-context baseline check and the
// diagnosis heuristics.
//
// Method: midranks for ties; U_a = R_a - n_a(n_a+1)/2; the normal
// approximation with tie correction and a continuity correction of 0.5:
//   sigma^2 = n_a n_b / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1)))
//   z = (U_a - n_a n_b / 2 -+ 0.5) / sigma
// Accurate for n_a, n_b >= 8 or so; smaller samples get the same formula
// (documented, not exact).
#pragma once

#include <cstddef>
#include <span>

namespace sonde::analysis {

struct RankTestResult {
  double u = 0;          // U of sample a: pairs (x in a, y in b) with x > y, ties count 1/2
  double z = 0;          // standardised U; > 0 when a tends to be larger
  double p_two_sided = 1;
  double p_greater = 1;  // one-sided: a tends to be larger than b
  double p_less = 1;     // one-sided: a tends to be smaller than b
  // Effect size: P(x > y) + P(x = y)/2 = U / (n_a n_b), 0.5 = no effect.
  double common_language = 0.5;
  bool valid = false;  // false when a sample is empty or all values are equal
};

RankTestResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// Standard normal cumulative distribution function.
double normal_cdf(double z);

}  // namespace sonde::analysis
