#include "stats/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace sonde::stats {
namespace {

template <typename T>
double percentile_of_sorted(std::span<const T> sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const auto a = static_cast<double>(sorted[lo]);
  const auto b = static_cast<double>(sorted[hi]);
  return a + (h - static_cast<double>(lo)) * (b - a);
}

}  // namespace

double percentile_sorted(std::span<const double> sorted, double p) {
  return percentile_of_sorted(sorted, p);
}

double percentile_sorted(std::span<const int64_t> sorted, double p) {
  return percentile_of_sorted(sorted, p);
}

double percentile_sorted(std::span<const float> sorted, double p) {
  return percentile_of_sorted(sorted, p);
}

double percentile(std::span<const double> values, double p) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return percentile_sorted(std::span<const double>(sorted), p);
}

double percentile_in_place(std::span<int64_t> samples, double p) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(samples.size() - 1) * p;
  const auto lo = static_cast<size_t>(std::floor(h));
  const auto at = [&](size_t k) { return samples.begin() + static_cast<std::ptrdiff_t>(k); };
  std::nth_element(samples.begin(), at(lo), samples.end());
  const auto x_lo = static_cast<double>(samples[lo]);
  if (lo + 1 >= samples.size() || h == static_cast<double>(lo)) return x_lo;
  // The next order statistic is the minimum of the upper part.
  const auto x_hi = static_cast<double>(*std::min_element(at(lo + 1), samples.end()));
  return x_lo + (h - static_cast<double>(lo)) * (x_hi - x_lo);
}

}  // namespace sonde::stats
