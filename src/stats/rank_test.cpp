#include "stats/rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sonde::stats {

namespace {

RankTestResult from_z(double u_minus_mean, double sd, double continuity) {
  RankTestResult r;
  if (!(sd > 0)) return r;  // every value equal: no evidence either way
  r.valid = true;
  r.z = u_minus_mean / sd;
  r.p_greater = 0.5 * std::erfc((u_minus_mean - continuity) / sd / std::sqrt(2.0));
  r.p_less = 0.5 * std::erfc(-(u_minus_mean + continuity) / sd / std::sqrt(2.0));
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_greater, r.p_less));
  return r;
}

template <typename T>
RankSums rank_sums_of(std::span<const T> first, std::span<const T> second) {
  RankSums r;
  const double n1 = static_cast<double>(first.size());
  const double n2 = static_cast<double>(second.size());
  r.n1 = n1;
  r.n2 = n2;
  if (first.empty() || second.empty()) return r;
  // Merge the sorted samples; ranks of a tie group are its average rank.
  std::vector<T> a(first.begin(), first.end()), b(second.begin(), second.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double rank_sum_first = 0, tie_term = 0;
  size_t i = 0, j = 0;
  double next_rank = 1;
  while (i < a.size() || j < b.size()) {
    const T v = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    size_t in_a = 0, in_b = 0;
    while (i < a.size() && a[i] == v) ++i, ++in_a;
    while (j < b.size() && b[j] == v) ++j, ++in_b;
    const auto t = static_cast<double>(in_a + in_b);
    const double average_rank = next_rank + (t - 1) / 2;
    rank_sum_first += average_rank * static_cast<double>(in_a);
    tie_term += t * t * t - t;
    next_rank += t;
  }
  r.u = rank_sum_first - n1 * (n1 + 1) / 2;
  const double n = n1 + n2;
  r.mean = n1 * n2 / 2;
  r.variance = n > 1 ? n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))) : 0;
  return r;
}

}  // namespace

RankSums rank_sums(std::span<const double> first, std::span<const double> second) {
  return rank_sums_of(first, second);
}

RankSums rank_sums(std::span<const int64_t> first, std::span<const int64_t> second) {
  return rank_sums_of(first, second);
}

RankTestResult mann_whitney(std::span<const double> first, std::span<const double> second) {
  const RankSums only = rank_sums(first, second);
  return stratified_rank_test(std::span<const RankSums>(&only, 1));
}

RankTestResult mann_whitney(std::span<const int64_t> first, std::span<const int64_t> second) {
  const RankSums only = rank_sums(first, second);
  return stratified_rank_test(std::span<const RankSums>(&only, 1));
}

RankTestResult stratified_rank_test(std::span<const RankSums> strata) {
  double numerator = 0, variance = 0, u = 0, pairs = 0, last_weight = 0;
  size_t used = 0;
  for (const RankSums& s : strata) {
    if (s.n1 == 0 || s.n2 == 0) continue;
    const double w = 1.0 / (s.n1 + s.n2 + 1);
    numerator += w * (s.u - s.mean);
    variance += w * w * s.variance;
    u += s.u;
    pairs += s.n1 * s.n2;
    last_weight = w;
    ++used;
  }
  if (pairs == 0) return {};
  // One stratum is the plain Mann-Whitney test: U moves in steps of 1 (of
  // w on this scale), so each tail gets the usual continuity correction.
  const double continuity = used == 1 ? 0.5 * last_weight : 0;
  RankTestResult r = from_z(numerator, std::sqrt(variance), continuity);
  r.u = u;
  r.common_language = u / pairs;
  return r;
}

std::vector<double> holm_adjust(std::span<const double> p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&p](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> adjusted(p.size(), 1.0);
  double running = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const double a = std::min(1.0, static_cast<double>(p.size() - k) * p[order[k]]);
    running = std::max(running, a);
    adjusted[order[k]] = running;
  }
  return adjusted;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace sonde::stats
