#include "stats/regression.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "stats/t_test.hpp"

namespace sonde::stats {
namespace {

std::vector<double> midranks(std::span<const double> v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) rank[order[k]] = mid;
    i = j;
  }
  return rank;
}

}  // namespace

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
  if (n >= 3) {
    const double df = static_cast<double>(n - 2);
    const double ss_res = std::max(0.0, syy - fit.slope * sxy);
    fit.slope_stderr = std::sqrt(ss_res / df / sxx);
    if (fit.slope_stderr > 0) {
      fit.p_slope_positive = 1 - student_t_cdf(fit.slope / fit.slope_stderr, df);
    } else {
      fit.p_slope_positive = fit.slope > 0 ? 0 : 1;  // a perfect line
    }
  }
  return fit;
}

double spearman_rho(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 3) return 0;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return 0;  // NaN has no rank
  const std::vector<double> rx = midranks(x.first(n));
  const std::vector<double> ry = midranks(y.first(n));
  const LinearFit fit = linear_regression(rx, ry);
  if (!fit.valid || fit.r_squared <= 0) return 0;
  // Pearson's r of the ranks: sqrt(R^2) with the slope's sign.
  return std::copysign(std::sqrt(std::min(1.0, fit.r_squared)), fit.slope);
}

}  // namespace sonde::stats
