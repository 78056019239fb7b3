#include "cli/bench_stats.hpp"

#include <algorithm>
#include <cmath>

namespace sonde::cli::bench {
namespace {

// Linear interpolation between order statistics of sorted values.
template <typename T>
double quantile(const std::vector<T>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) * (1 - frac) + static_cast<double>(sorted[hi]) * frac;
}

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
  s.median = quantile(v, 0.5);
  s.q1 = quantile(v, 0.25);
  s.q3 = quantile(v, 0.75);
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
  LinearFit f;
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return f;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) return f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
  return f;
}

}  // namespace sonde::cli::bench
