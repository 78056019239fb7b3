// Statistics for `sonde bench`: MooBench's per-configuration summary of the
// timed calls (mean with 95% confidence interval, median, quartiles, min,
// max) and a least-squares line for the depth-scaling experiment.
#pragma once

#include <cstddef>
#include <vector>

namespace sonde::cli::bench {

struct Summary {
  size_t n = 0;
  double mean = 0, ci95 = 0;  // mean ± ci95 (normal approximation: 1.96 standard errors)
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
};

// Sorts `values` in place.
Summary summarize(std::vector<float>& values);
Summary summarize(std::vector<double> values);

struct LinearFit {
  double slope = 0, intercept = 0, r2 = 0;
};

LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace sonde::cli::bench
