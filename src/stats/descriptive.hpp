// Descriptive statistics: mean and deviation, the mean with a confidence
// interval, bootstrap and batch means; percentiles (percentile.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stats/percentile.hpp"

namespace sonde::stats {

double mean(std::span<const double> values);
// The upper of the two middle values (the middle one for an odd count): an
// order statistic, a value the sample holds, unlike percentile(0.5), which
// averages the two; 0 for an empty sample. For robust levels (the load
// driver's stability windows, the hiccups' normal level).
double middle_value(std::vector<double> values);
// Sarle's bimodality coefficient (g² + 1) / (k + 3(n-1)²/((n-2)(n-3))) with
// the bias-corrected sample skewness g and excess kurtosis k (as SAS and
// SPSS report them); values above 5/9 (that of the uniform distribution)
// hint at bi- or multi-modality. 0 for n < 4 or a constant sample.
double bimodality_coefficient(std::span<const int64_t> samples);
// Sample standard deviation (n - 1 denominator); 0 for n < 2.
double stddev(std::span<const double> values);

struct Interval {
  double low = 0;
  double high = 0;
  double estimate = 0;
};

// Two-sided (1 - alpha) t-interval of the mean: mean +- t_{1-alpha/2, n-1} s / sqrt(n).
Interval mean_confidence_interval(std::span<const double> values, double alpha = 0.05);

// Percentile bootstrap interval of the mean: `resamples` resamples drawn
// with a std::mt19937_64 seeded with `seed` (deterministic).
Interval bootstrap_mean_interval(std::span<const double> values, double alpha = 0.05,
                                 int resamples = 1000, uint64_t seed = 1);

// Bootstrapped means (the thesis' "bootstrap then t-test": the means of
// resamples are approximately normal whatever the data's distribution).
std::vector<double> bootstrap_means(std::span<const double> values, int resamples, uint64_t seed);

// Batch means: the series split into `batches` consecutive batches of equal
// size (the remainder at the end dropped), one mean each. Consecutive
// response times are autocorrelated; batch means are nearly independent.
std::vector<double> batch_means(std::span<const double> series, int batches);

// The standard error of a series' mean from its batch means, with their
// degrees of freedom (batches - 1): the error of an autocorrelated series
// (response times, utilization samples), which the per-value error
// understates. {0, 0} with fewer than two values per batch.
struct MeanError {
  double se = 0;
  double df = 0;
};
inline constexpr int kBatchMeans = 10;  // the textbook count, 9 degrees of freedom
MeanError batch_mean_error(std::span<const double> series, int batches = kBatchMeans);

// The error of a series' mean: from its batch means when the series is long
// enough for them (at least two values per batch), else from its values as
// if they were independent; {0, 0} with fewer than two values. (Requests
// are autocorrelated: the shop's cart at 12 users in scenario tc15 had an
// error of 0.071 ms per request, 0.188 ms from batch means.)
MeanError series_mean_error(std::span<const double> series);

// One-sided Welch test from two means and their errors (each with its own
// degrees of freedom, e.g. from batch means; Welch-Satterthwaite): the
// probability of b's mean exceeding a's by this much when it does not.
// Without any error: 0 when b's mean is larger, else 1.
double p_greater(double mean_a, const MeanError& a, double mean_b, const MeanError& b);

}  // namespace sonde::stats
