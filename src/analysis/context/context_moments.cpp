#include "analysis/context/context_moments.hpp"

#include <algorithm>

#include "stats/percentile.hpp"

namespace sonde::analysis {

void Moments::merge(const Moments& o) {
  if (o.n == 0) return;
  if (n == 0) {
    *this = o;
    return;
  }
  const double na = static_cast<double>(n);
  const double nb = static_cast<double>(o.n);
  const double delta = o.mean - mean;
  const double total = na + nb;
  mean += delta * nb / total;
  m2 += o.m2 + delta * delta * na * nb / total;
  n += o.n;
}

double bimodality_coefficient(std::span<const int64_t> samples) {
  const size_t count = samples.size();
  if (count < 4) return 0;
  const double n = static_cast<double>(count);
  double mean = 0;
  for (int64_t x : samples) mean += static_cast<double>(x);
  mean /= n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (int64_t x : samples) {
    const double d = static_cast<double>(x) - mean;
    const double d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  if (m2 <= 0) return 0;
  // Bias-corrected sample skewness and excess kurtosis (as SAS/SPSS report).
  const double g1 = m3 / std::pow(m2, 1.5);
  const double skew = g1 * std::sqrt(n * (n - 1)) / (n - 2);
  const double g2 = m4 / (m2 * m2) - 3;
  const double kurt = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6);
  return (skew * skew + 1) / (kurt + 3 * (n - 1) * (n - 1) / ((n - 2) * (n - 3)));
}

Quartiles quartiles(std::span<int64_t> samples) {
  if (samples.empty()) return {};
  Quartiles q;
  q.median = stats::percentile_in_place(samples, 0.5);
  q.q1 = stats::percentile_in_place(samples, 0.25);
  q.q3 = stats::percentile_in_place(samples, 0.75);
  return q;
}

}  // namespace sonde::analysis
