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

Quartiles quartiles(std::span<int64_t> samples) {
  if (samples.empty()) return {};
  Quartiles q;
  q.median = stats::percentile_in_place(samples, 0.5);
  q.q1 = stats::percentile_in_place(samples, 0.25);
  q.q3 = stats::percentile_in_place(samples, 0.75);
  return q;
}

}  // namespace sonde::analysis
