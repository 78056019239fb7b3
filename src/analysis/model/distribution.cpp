#include "analysis/model/distribution.hpp"

#include <algorithm>
#include <cmath>

#include "stats/percentile.hpp"

namespace sonde::analysis {

DistributionSummary summarize(std::vector<int64_t>& samples) {
  DistributionSummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  // Sum in int64 (exact; 2^63 ns is 292 years), mean and deviation in double
  // with a second pass, which stays accurate when the mean is large.
  for (int64_t v : samples) s.total += v;
  s.mean = static_cast<double>(s.total) / static_cast<double>(s.count);
  if (s.count > 1) {
    double squares = 0;
    for (int64_t v : samples) {
      const double d = static_cast<double>(v) - s.mean;
      squares += d * d;
    }
    s.stddev = std::sqrt(squares / static_cast<double>(s.count - 1));
  }
  s.median = stats::percentile_sorted(std::span<const int64_t>(samples), 0.5);
  s.p90 = stats::percentile_sorted(std::span<const int64_t>(samples), 0.90);
  s.p95 = stats::percentile_sorted(std::span<const int64_t>(samples), 0.95);
  s.p99 = stats::percentile_sorted(std::span<const int64_t>(samples), 0.99);
  return s;
}

}  // namespace sonde::analysis
