// Summary statistics of a sample of durations, with exact quantiles.
//
// Quantile definition (Hyndman & Fan type 7, the default of R and NumPy):
// with the n samples sorted ascending as x[0..n-1] and h = (n - 1) * p,
//   Q(p) = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]),
// i.e. linear interpolation between the two closest ranks; Q(0) = min,
// Q(1) = max, Q(0.5) = the usual median. Exact (no sketches): the analysis
// keeps every sample.
//
// stddev is the sample standard deviation (divisor n - 1); 0 when n < 2.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sonde::analysis {

struct DistributionSummary {
  uint64_t count = 0;
  int64_t total = 0;
  double mean = 0;
  double stddev = 0;
  int64_t min = 0;
  double median = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  int64_t max = 0;
  // False when the quantiles come from a histogram (duration_accumulator.hpp).
  bool exact_quantiles = true;
};

// Q(p) of an ascending sample, p in [0, 1]. 0 for an empty sample.
double quantile_sorted(std::span<const int64_t> sorted, double p);

// Sorts `samples` in place and summarises them. All zero for an empty sample.
DistributionSummary summarize(std::vector<int64_t>& samples);

}  // namespace sonde::analysis
