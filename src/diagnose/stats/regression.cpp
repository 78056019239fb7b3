#include "diagnose/stats/regression.hpp"

#include <algorithm>

namespace sonde::diagnose::stats {

LinearFit linear_regression(std::span<const double> x, std::span<const double> y) {
  LinearFit fit;
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return fit;
  double mx = 0;
  double my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0;
  double sxy = 0;
  double syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0) return fit;
  fit.slope = sxy / sxx;
  fit.intercept = my - fit.slope * mx;
  // SS_res = syy - slope * sxy for the least-squares line.
  fit.r_squared = syy > 0 ? 1 - (syy - fit.slope * sxy) / syy : 0;
  fit.valid = true;
  return fit;
}

}  // namespace sonde::diagnose::stats
