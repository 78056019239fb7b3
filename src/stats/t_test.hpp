// Student's t distribution and Welch's unequal-variance t-test.
//
// Why not Boost.Math (Debian libboost-math-dev): sonde needs the t
// distribution's CDF and quantile only, these are about 60 lines checked
// against R's pt() and qt() to their printed digits (tests/stats/stats_test.cpp), and
// Boost.Math's distributions would be the project's only Boost dependency,
// its headers compiled into every heuristic's translation unit. Should
// another distribution be needed (F, chi-squared, noncentral t), switch
// to Boost.Math rather than adding a second continued fraction here.
#pragma once

#include <span>

namespace sonde::stats {

// Regularized incomplete beta function I_x(a, b) by the continued fraction
// (Lentz's method; Numerical Recipes' betacf), accurate to ~1e-12.
double incomplete_beta(double a, double b, double x);

// P(T <= t) for Student's t with `df` degrees of freedom (df > 0, may be
// fractional as Welch needs): 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t >= 0.
double student_t_cdf(double t, double df);

// Inverse of student_t_cdf by bisection (p in (0, 1)).
double student_t_quantile(double p, double df);

struct TTestResult {
  double t = 0;   // (mean_b - mean_a) / se: > 0 when b is larger
  double df = 0;  // Welch-Satterthwaite degrees of freedom
  double p_two_sided = 1;
  double p_greater = 1;  // one-sided: mean of b > mean of a
  double mean_a = 0;
  double mean_b = 0;
  bool valid = false;  // false when a sample has < 2 values or both have zero variance
};

// Welch's t-test of b against a (which direction counts is the caller's:
// the heuristics ask "did it increase from a to b", so p_greater).
TTestResult welch_t_test(std::span<const double> a, std::span<const double> b);

}  // namespace sonde::stats
