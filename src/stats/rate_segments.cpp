#include "stats/rate_segments.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sonde::stats {
namespace {

// Bernoulli log-likelihood of k hits in n at their own rate k / n.
double log_likelihood(double k, double n) {
  if (k <= 0 || k >= n) return 0;
  return k * std::log(k / n) + (n - k) * std::log(1 - k / n);
}

double log_choose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// The grid of the interval search: at most this many cells per segment.
constexpr std::size_t kGridCells = 128;

class Segmenter {
 public:
  Segmenter(const std::vector<bool>& hits, double alpha) : alpha_(alpha), prefix_(hits.size() + 1) {
    for (std::size_t i = 0; i < hits.size(); ++i) prefix_[i + 1] = prefix_[i] + (hits[i] ? 1 : 0);
  }

  std::vector<RateSegment> run() {
    std::vector<RateSegment> out;
    // A work list instead of recursion: a long sequence may split deep on
    // one side. Left parts are taken first, so segments come out in order.
    std::vector<std::pair<std::size_t, std::size_t>> pending = {{0, prefix_.size() - 1}};
    while (!pending.empty()) {
      const auto [a, b] = pending.back();
      pending.pop_back();
      const std::vector<std::size_t> cuts = cuts_of(a, b);
      if (cuts.empty()) {
        out.push_back({a, b, hits(a, b)});
        continue;
      }
      std::size_t end = b;
      for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
        pending.emplace_back(*it, end);
        end = *it;
      }
      pending.emplace_back(a, end);
    }
    return out;
  }

 private:
  std::size_t hits(std::size_t a, std::size_t b) const { return prefix_[b] - prefix_[a]; }

  // The log-likelihood ratio of [i, j) against the rest of [a, b).
  double llr(std::size_t a, std::size_t b, std::size_t i, std::size_t j, double whole) const {
    const double k = static_cast<double>(hits(a, b));
    const double inside = static_cast<double>(hits(i, j));
    const double length = static_cast<double>(j - i);
    return log_likelihood(inside, length) +
           log_likelihood(k - inside, static_cast<double>(b - a) - length) - whole;
  }

  // Does [i, j) differ from the rest of [a, b)? Fisher's exact p-value.
  double p_of(std::size_t a, std::size_t b, std::size_t i, std::size_t j) const {
    return fisher_exact_two_sided(b - a, hits(a, b), j - i, hits(i, j));
  }

  // Where [a, b) splits: one cut (a change of rate), two (a stretch that
  // differs from both sides), or none. Each kind is tested at alpha / 2
  // over its candidates.
  std::vector<std::size_t> cuts_of(std::size_t a, std::size_t b) const {
    const std::size_t m = b - a;
    const std::size_t k = hits(a, b);
    if (m < 2 || k == 0 || k == m) return {};
    const double whole = log_likelihood(static_cast<double>(k), static_cast<double>(m));
    // (1) One change: every cut, m - 1 candidates.
    double best = 0;
    std::size_t at = 0;
    for (std::size_t i = a + 1; i < b; ++i) {
      const double v = llr(a, b, a, i, whole);
      if (v > best) {
        best = v;
        at = i;
      }
    }
    if (at != 0 && p_of(a, b, a, at) * static_cast<double>(m - 1) < alpha_ / 2) return {at};
    // (2) A stretch inside that differs from the rest: intervals between
    // points of a grid of at most kGridCells cells, then the best interval
    // with its ends moved within the neighbouring cells. The test counts
    // the grid's candidates; moving the ends afterwards places the
    // stretch, it does not decide it.
    const std::size_t cells = std::min(kGridCells, m);
    if (cells < 3) return {};
    const auto grid = [&](std::size_t t) { return a + t * m / cells; };
    best = 0;
    std::size_t s_best = 0, t_best = 0;
    for (std::size_t s = 1; s + 1 < cells; ++s) {
      for (std::size_t t = s + 1; t < cells; ++t) {
        const double v = llr(a, b, grid(s), grid(t), whole);
        if (v > best) {
          best = v;
          s_best = s;
          t_best = t;
        }
      }
    }
    if (s_best == 0) return {};
    const double candidates = static_cast<double>((cells - 1) * (cells - 2) / 2);
    if (p_of(a, b, grid(s_best), grid(t_best)) * candidates >= alpha_ / 2) return {};
    std::size_t i_best = grid(s_best), j_best = grid(t_best);
    // Each end moved within its neighbouring cells, one end at a time:
    // linear in the cell width, however long the segment.
    for (std::size_t i = grid(s_best - 1) + 1; i < grid(s_best + 1) && i < j_best; ++i) {
      const double v = llr(a, b, i, j_best, whole);
      if (v > best) {
        best = v;
        i_best = i;
      }
    }
    for (std::size_t j = std::max(i_best, grid(t_best - 1)) + 1; j < grid(t_best + 1); ++j) {
      const double v = llr(a, b, i_best, j, whole);
      if (v > best) {
        best = v;
        j_best = j;
      }
    }
    return {i_best, j_best};
  }

  double alpha_;
  std::vector<std::size_t> prefix_;  // hits in [a, b) = prefix_[b] - prefix_[a]
};

}  // namespace

double fisher_exact_two_sided(std::size_t total, std::size_t hits, std::size_t drawn,
                              std::size_t drawn_hits) {
  const double N = static_cast<double>(total);
  const double K = static_cast<double>(hits);
  const double n = static_cast<double>(drawn);
  const double lo = std::max(0.0, n + K - N);
  const double hi = std::min(n, K);
  const double x0 = static_cast<double>(drawn_hits);
  if (x0 < lo || x0 > hi) return 0;
  // The tail on the observed side of the mean, summed outwards from x0:
  // the probabilities fall monotonically there, so the sum stops once a
  // term no longer changes it.
  const bool upper = x0 >= n * K / N;
  const double log_first = log_choose(K, x0) + log_choose(N - K, n - x0) - log_choose(N, n);
  double term = std::exp(log_first);
  double tail = term;
  for (double x = x0; upper ? x < hi : x > lo; x += upper ? 1 : -1) {
    // pmf(x + 1) / pmf(x) = (K - x)(n - x) / ((x + 1)(N - K - n + x + 1));
    // pmf(x - 1) / pmf(x) = x (N - K - n + x) / ((K - x + 1)(n - x + 1)).
    term *= upper ? (K - x) * (n - x) / ((x + 1) * (N - K - n + x + 1))
                  : x * (N - K - n + x) / ((K - x + 1) * (n - x + 1));
    if (term <= tail * 1e-17) break;
    tail += term;
  }
  return std::min(1.0, 2 * tail);
}

std::vector<RateSegment> rate_segments(const std::vector<bool>& hits, double alpha) {
  if (hits.empty()) return {};
  return Segmenter(hits, alpha).run();
}

}  // namespace sonde::stats
