#include "stats/position_test.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sonde::stats {
namespace {

// splitmix64: small, fast, the same on every platform (the standard
// library's distributions are not), so the p-value is reproducible.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), without modulo bias (rejection).
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do v = next();
    while (v >= limit);
    return v % n;
  }
};

}  // namespace

PositionTest position_test(const std::vector<bool>& marked, int resamples, uint64_t seed) {
  PositionTest t;
  const size_t n = marked.size();
  size_t k = 0;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (marked[i]) {
      ++k;
      sum += static_cast<double>(i);
    }
  }
  if (k == 0 || k == n) return t;
  t.valid = true;
  const double middle = static_cast<double>(k) * static_cast<double>(n - 1) / 2;
  t.mean_position = sum / static_cast<double>(k) / static_cast<double>(n - 1);  // n >= 2 here
  const double observed = std::abs(sum - middle);
  // Mark k of the n positions at random (a partial Fisher-Yates shuffle)
  // and count the placements at least as far off-centre. Drawing the
  // smaller side is the same test with fewer draws: the unmarked positions'
  // sum lies exactly as far from its own middle, (n - k)(n - 1) / 2.
  const size_t draw = std::min(k, n - k);
  const double draw_middle = static_cast<double>(draw) * static_cast<double>(n - 1) / 2;
  std::vector<uint32_t> positions(n);
  std::iota(positions.begin(), positions.end(), 0u);
  SplitMix rng{seed};
  int extreme = 0;
  for (int r = 0; r < resamples; ++r) {
    double s = 0;
    for (size_t i = 0; i < draw; ++i) {
      const size_t j = i + rng.below(n - i);
      std::swap(positions[i], positions[j]);
      s += positions[i];
    }
    // 1e-9: a placement exactly as far off-centre counts (ties of sums).
    if (std::abs(s - draw_middle) >= observed - 1e-9) ++extreme;
  }
  t.p_value = (1.0 + extreme) / (1.0 + resamples);
  return t;
}

}  // namespace sonde::stats
