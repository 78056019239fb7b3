// Ordinary least-squares line y = intercept + slope x, and Spearman's rank
// correlation (how steadily y rises or falls with x, whatever the shape).
#pragma once

#include <span>

namespace sonde::stats {

struct LinearFit {
  double slope = 0;
  double intercept = 0;
  double r_squared = 0;  // 1 - SS_res / SS_tot; 0 when y is constant
  // The slope's standard error sqrt(SS_res / (n - 2) / Sxx) and the
  // one-sided p-value of "the slope is > 0" (Student's t, n - 2 degrees of
  // freedom); 0 and 1 with fewer than 3 points.
  double slope_stderr = 0;
  double p_slope_positive = 1;
  bool valid = false;  // false with < 2 points or constant x
};

LinearFit linear_regression(std::span<const double> x, std::span<const double> y);

// Spearman's rho: Pearson's correlation of the ranks (midranks for ties),
// in [-1, 1]; 0 with fewer than 3 points, a constant x or y, or a value
// that is not finite.
double spearman_rho(std::span<const double> x, std::span<const double> y);

}  // namespace sonde::stats
