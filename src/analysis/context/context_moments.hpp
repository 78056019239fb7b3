// Mergeable first and second moments of a sample (Welford / Chan et al.), so
// that the calling-context analysis can aggregate finest contexts into
// coarser ones, and projected partial instrumentations, without revisiting
// raw samples.
//
// The standard deviation used throughout the context analysis is the
// POPULATION standard deviation (divisor n). With it the frequency-weighted
// mean σ of a partition never exceeds that of a coarser partition (law of
// total variance + Jensen), which the property tests check; with the sample
// σ (divisor n - 1) small classes can break this.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "stats/descriptive.hpp"

namespace sonde::analysis {

struct Moments {
  uint64_t n = 0;
  double mean = 0;
  double m2 = 0;  // sum of squared deviations from the mean

  void add(double x) {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  void merge(const Moments& o);
  double population_sd() const { return n == 0 ? 0.0 : std::sqrt(m2 / static_cast<double>(n)); }
};

// Sarle's bimodality coefficient (stats/descriptive.hpp); values above 5/9
// (that of the uniform distribution) hint at bi- or multi-modality. A hint
// only: very skewed unimodal samples can exceed it too.
using stats::bimodality_coefficient;
inline constexpr double kBimodalityThreshold = 5.0 / 9.0;

// Median and quartiles (type 7, as distribution.hpp) of `samples`, which is
// reordered.
struct Quartiles {
  double q1 = 0;
  double median = 0;
  double q3 = 0;
  double iqr() const { return q3 - q1; }
};
Quartiles quartiles(std::span<int64_t> samples);

// 1 - weighted / unweighted, in percent; 0 when there is no spread at all.
inline double reduction_percent(double coarse_sd, double fine_sd) {
  return coarse_sd > 0 ? 100.0 * (1.0 - fine_sd / coarse_sd) : 0.0;
}

}  // namespace sonde::analysis
