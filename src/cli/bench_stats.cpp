#include "cli/bench_stats.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "stats/percentile.hpp"
#include "stats/regression.hpp"

namespace sonde::cli::bench {
namespace {

template <typename T>
Summary summarize_sorted(const std::vector<T>& v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  double sum = 0;
  for (T x : v) sum += static_cast<double>(x);
  s.mean = sum / static_cast<double>(s.n);
  double sq = 0;
  for (T x : v) sq += (static_cast<double>(x) - s.mean) * (static_cast<double>(x) - s.mean);
  if (s.n > 1) {
    const double sd = std::sqrt(sq / static_cast<double>(s.n - 1));
    s.ci95 = 1.96 * sd / std::sqrt(static_cast<double>(s.n));
  }
  s.min = static_cast<double>(v.front());
  s.max = static_cast<double>(v.back());
  const std::span<const T> sorted(v);
  s.median = stats::percentile_sorted(sorted, 0.5);
  s.q1 = stats::percentile_sorted(sorted, 0.25);
  s.q3 = stats::percentile_sorted(sorted, 0.75);
  return s;
}

}  // namespace

Summary summarize(std::vector<float>& values) {
  std::sort(values.begin(), values.end());
  return summarize_sorted(values);
}

Summary summarize(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return summarize_sorted(values);
}

LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  const stats::LinearFit fit = stats::linear_regression(std::span<const double>(x.data(), n),
                                                        std::span<const double>(y.data(), n));
  if (!fit.valid) return {};
  return {fit.slope, fit.intercept, fit.r_squared};
}

}  // namespace sonde::cli::bench
