#include "stats/t_test.hpp"

#include <cmath>

#include "stats/descriptive.hpp"

namespace sonde::stats {
namespace {

// Continued fraction for I_x(a, b), modified Lentz (converges for x < (a+1)/(a+b+2)).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  const double qab = a + b;
  const double qap = a + 1;
  const double qam = a - 1;
  double c = 1;
  double d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  double lo = -1e6;
  double hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (student_t_cdf(mid, df) < p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

TTestResult welch_t_test(std::span<const double> a, std::span<const double> b) {
  TTestResult r;
  if (a.size() < 2 || b.size() < 2) return r;
  r.mean_a = mean(a);
  r.mean_b = mean(b);
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double va = stddev(a) * stddev(a) / na;
  const double vb = stddev(b) * stddev(b) / nb;
  const double se2 = va + vb;
  if (se2 <= 0) return r;
  r.t = (r.mean_b - r.mean_a) / std::sqrt(se2);
  r.df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
  const double upper = 1 - student_t_cdf(r.t, r.df);
  r.p_greater = upper;
  r.p_two_sided = 2 * std::min(upper, 1 - upper);
  r.valid = true;
  return r;
}

}  // namespace sonde::stats
