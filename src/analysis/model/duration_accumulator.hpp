// Streaming summary of a stream of durations with bounded memory.
//
// count, total, mean, standard deviation, min and max are always exact.
// Quantiles are exact (Hyndman & Fan type 7, as distribution.hpp) while at
// most `exact_limit` samples have been added; past that the samples move into
// a log-linear histogram (128 sub-buckets per power of two, values below 256
// kept exactly) and quantiles come from bucket midpoints, clamped to
// [min, max]: relative error at most 1/256 (0.4 %). Memory is then bounded by
// the histogram (at most ~57 KiB) however many samples arrive, which is what
// lets a 10^8-record log be analysed without holding 10^8 durations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/model/distribution.hpp"

namespace sonde::analysis {

class DurationAccumulator {
 public:
  static constexpr size_t kDefaultExactLimit = 16384;

  explicit DurationAccumulator(size_t exact_limit = kDefaultExactLimit)
      : exact_limit_(exact_limit) {}

  void add(int64_t value);
  void merge(const DurationAccumulator& other);

  // The histogram bucket `value` falls in: stores that keep bucket counts
  // themselves (the ClickHouse store's operation_buckets) use it, then
  // from_histogram() to answer as this class does.
  static size_t histogram_bucket(int64_t value);
  // The smallest value in that bucket (histogram_bucket(v) == index for
  // every v from it up to the next bucket's lowest).
  static int64_t histogram_bucket_low(size_t index);
  // An accumulator in histogram mode from (bucket, count) pairs, with the
  // exact total, min and max: its quantiles are those an accumulator fed
  // the same values gives once in histogram mode. The standard deviation
  // is not known (summary().stddev is 0).
  static DurationAccumulator from_histogram(const std::vector<std::pair<size_t, uint64_t>>& buckets,
                                            int64_t total, int64_t min, int64_t max);

  uint64_t count() const { return count_; }
  // True while quantiles are exact (no more than exact_limit samples).
  bool exact() const { return !histogram_mode_; }
  // Q(p), p in [0, 1]; 0 when empty.
  double quantile(double p) const;
  DistributionSummary summary() const;

  // The whole state, appended to `out` (LEB128 varints), so that a store
  // can keep it and go on adding later without the samples it saw. load()
  // replaces this accumulator's state with one save() wrote; it returns
  // false, leaving this one unchanged, for bytes that are not such a state
  // or do not agree with themselves (counts, bounds, bucket indexes).
  void save(std::string& out) const;
  bool load(std::string_view in);

 private:
  void move_to_histogram();
  void add_to_histogram(int64_t value, uint64_t times);
  // Value of the `rank`-th smallest sample (0-based) in histogram mode.
  double histogram_value_at(uint64_t rank) const;

  size_t exact_limit_;
  uint64_t count_ = 0;
  int64_t total_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  // Sums of deviations from the first value (the "shifted data" variance
  // algorithm): stable when the mean is large against the spread, mergeable,
  // and without Welford's division per sample.
  int64_t shift_ = 0;
  double shifted_sum_ = 0;
  double shifted_squares_ = 0;
  bool histogram_mode_ = false;
  mutable std::vector<int64_t> samples_;  // exact mode; sorted lazily
  mutable bool sorted_ = true;
  std::vector<uint64_t> buckets_;  // histogram mode; grows to the highest bucket used
};

}  // namespace sonde::analysis
