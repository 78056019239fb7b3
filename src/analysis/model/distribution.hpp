// Summary statistics of a sample of durations, with exact quantiles.
//
// Quantiles as stats::percentile_sorted defines them (Hyndman & Fan type 7,
// the default of R and NumPy; stats/percentile.hpp). Exact (no sketches):
// the analysis keeps every sample.
//
// stddev is the sample standard deviation (divisor n - 1); 0 when n < 2.
#pragma once

#include <cstdint>
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

// Sorts `samples` in place and summarises them. All zero for an empty sample.
DistributionSummary summarize(std::vector<int64_t>& samples);

}  // namespace sonde::analysis
