#include "stats/erlang.hpp"

#include <algorithm>
#include <limits>

namespace sonde::stats {

double erlang_c(int servers, double utilization) {
  if (servers < 1) servers = 1;
  if (utilization >= 1) return 1;
  if (utilization <= 0) return 0;
  const double a = servers * utilization;
  double b = 1;
  for (int k = 1; k <= servers; ++k) b = a * b / (k + a * b);
  return b / (1 - utilization * (1 - b));
}

double response_time_factor(int servers, double utilization) {
  if (servers < 1) servers = 1;
  if (utilization >= 1) return std::numeric_limits<double>::infinity();
  return erlang_c(servers, utilization) / (servers * (1 - utilization)) + 1;
}

double olb_threshold(double single_user_rt, int servers, double utilization, double tolerance) {
  if (servers < 1) servers = 1;
  if (utilization >= 1) return std::numeric_limits<double>::infinity();
  utilization = std::max(0.0, utilization);
  return tolerance * (single_user_rt / servers) * erlang_c(servers, utilization) /
             (1 - utilization) +
         single_user_rt;
}

double utilization_for_rt_factor(double factor, int servers) {
  if (factor <= 1) return 0;
  double lo = 0;
  double hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    if (response_time_factor(servers, mid) < factor)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace sonde::stats
