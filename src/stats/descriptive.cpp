#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "stats/t_test.hpp"

namespace sonde::stats {

double mean(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double middle_value(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

double bimodality_coefficient(std::span<const int64_t> samples) {
  const size_t count = samples.size();
  if (count < 4) return 0;
  const double n = static_cast<double>(count);
  double m = 0;
  for (int64_t x : samples) m += static_cast<double>(x);
  m /= n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (int64_t x : samples) {
    const double d = static_cast<double>(x) - m;
    const double d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  if (m2 <= 0) return 0;
  const double g1 = m3 / std::pow(m2, 1.5);
  const double skew = g1 * std::sqrt(n * (n - 1)) / (n - 2);
  const double g2 = m4 / (m2 * m2) - 3;
  const double kurt = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6);
  return (skew * skew + 1) / (kurt + 3 * (n - 1) * (n - 1) / ((n - 2) * (n - 3)));
}

double stddev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double ss = 0;
  for (double v : values) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

Interval mean_confidence_interval(std::span<const double> values, double alpha) {
  Interval out;
  out.estimate = mean(values);
  out.low = out.high = out.estimate;
  if (values.size() < 2) return out;
  const double n = static_cast<double>(values.size());
  const double half = student_t_quantile(1 - alpha / 2, n - 1) * stddev(values) / std::sqrt(n);
  out.low = out.estimate - half;
  out.high = out.estimate + half;
  return out;
}

std::vector<double> bootstrap_means(std::span<const double> values, int resamples, uint64_t seed) {
  std::vector<double> means;
  if (values.empty() || resamples <= 0) return means;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  means.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    double sum = 0;
    for (size_t i = 0; i < values.size(); ++i) sum += values[pick(rng)];
    means.push_back(sum / static_cast<double>(values.size()));
  }
  return means;
}

Interval bootstrap_mean_interval(std::span<const double> values, double alpha, int resamples,
                                 uint64_t seed) {
  Interval out;
  out.estimate = mean(values);
  std::vector<double> means = bootstrap_means(values, resamples, seed);
  if (means.empty()) {
    out.low = out.high = out.estimate;
    return out;
  }
  std::sort(means.begin(), means.end());
  out.low = percentile_sorted(means, alpha / 2);
  out.high = percentile_sorted(means, 1 - alpha / 2);
  return out;
}

std::vector<double> batch_means(std::span<const double> series, int batches) {
  std::vector<double> out;
  if (batches <= 0) return out;
  const size_t size = series.size() / static_cast<size_t>(batches);
  if (size == 0) return out;
  for (int b = 0; b < batches; ++b) {
    out.push_back(mean(series.subspan(static_cast<size_t>(b) * size, size)));
  }
  return out;
}

MeanError batch_mean_error(std::span<const double> series, int batches) {
  if (batches < 2 || series.size() < 2 * static_cast<size_t>(batches)) return {};
  const std::vector<double> means = batch_means(series, batches);
  return {stddev(means) / std::sqrt(static_cast<double>(batches)), batches - 1.0};
}

MeanError series_mean_error(std::span<const double> series) {
  if (const MeanError e = batch_mean_error(series); e.df > 0) return e;
  if (series.size() < 2) return {};
  return {stddev(series) / std::sqrt(static_cast<double>(series.size())),
          static_cast<double>(series.size() - 1)};
}

double p_greater(double mean_a, const MeanError& a, double mean_b, const MeanError& b) {
  const double va = a.se * a.se;
  const double vb = b.se * b.se;
  const double var = va + vb;
  if (var <= 0) return mean_b > mean_a ? 0 : 1;
  double denominator = 0;
  if (va > 0 && a.df > 0) denominator += va * va / a.df;
  if (vb > 0 && b.df > 0) denominator += vb * vb / b.df;
  const double df = denominator > 0 ? var * var / denominator : 1;
  return 1 - student_t_cdf((mean_b - mean_a) / std::sqrt(var), df);
}

}  // namespace sonde::stats
