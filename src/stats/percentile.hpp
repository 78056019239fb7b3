// Percentiles (quantiles) of a sample: the one definition sonde uses
// everywhere, Hyndman & Fan type 7 (R's default quantile(type = 7), NumPy's
// "linear"). With the n values sorted ascending as x[0..n-1] and
// h = (n - 1) p:
//   Q(p) = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]),
// linear interpolation between the two closest ranks; Q(0) = min,
// Q(1) = max, Q(0.5) the usual median. The ClickHouse store computes the
// same in SQL (store/clickhouse_store.cpp).
#pragma once

#include <cstdint>
#include <span>

namespace sonde::stats {

// Q(p) of an ascending sample, p clamped to [0, 1]. NaN for an empty sample.
double percentile_sorted(std::span<const double> sorted, double p);
double percentile_sorted(std::span<const int64_t> sorted, double p);
double percentile_sorted(std::span<const float> sorted, double p);

// Q(p) of a sample in any order (copied and sorted). NaN for an empty sample.
double percentile(std::span<const double> values, double p);

// Q(p) of a sample in any order by selection (O(n), no copy): `samples` is
// partially reordered. NaN for an empty sample.
double percentile_in_place(std::span<int64_t> samples, double p);

}  // namespace sonde::stats
