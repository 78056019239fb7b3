#include "analysis/stats_rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace sonde::analysis {

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

RankTestResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  RankTestResult r;
  if (a.empty() || b.empty()) return r;
  struct Item {
    double value;
    bool from_a;
  };
  std::vector<Item> all;
  all.reserve(a.size() + b.size());
  for (double x : a) all.push_back({x, true});
  for (double y : b) all.push_back({y, false});
  std::sort(all.begin(), all.end(), [](const Item& l, const Item& r2) { return l.value < r2.value; });

  const double n = static_cast<double>(all.size());
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    for (size_t k = i; k < j; ++k)
      if (all[k].from_a) rank_sum_a += midrank;
    i = j;
  }
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  r.u = rank_sum_a - na * (na + 1) / 2;
  r.common_language = r.u / (na * nb);
  const double variance = na * nb / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) return r;  // every value equal: nothing to test
  const double sigma = std::sqrt(variance);
  const double centred = r.u - na * nb / 2;
  r.z = centred / sigma;
  const double z_greater = (centred - 0.5) / sigma;  // continuity-corrected
  const double z_less = (centred + 0.5) / sigma;
  r.p_greater = 1 - normal_cdf(z_greater);
  r.p_less = normal_cdf(z_less);
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_greater, r.p_less));
  r.valid = true;
  return r;
}

}  // namespace sonde::analysis
