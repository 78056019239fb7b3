// Queueing theory for One Lane Bridge and Database Congestion (thesis
// Eq. 6.25): M/M/c with c servers (= CPU cores) at utilization u.
#pragma once

namespace sonde::stats {

// Erlang C: probability that an arriving job waits, c servers, per-server
// utilization u in [0, 1). Computed with the Erlang B recursion
// B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)), a = c u, then
// C = B / (1 - u (1 - B)), which is stable for large c. Returns 1 for u >= 1.
double erlang_c(int servers, double utilization);

// Mean response time of M/M/c relative to the service demand:
// R / D = C(c, u) / (c (1 - u)) + 1. Infinite for u >= 1.
double response_time_factor(int servers, double utilization);

// The One Lane Bridge threshold (thesis Alg. 15): the largest mean response
// time that CPU queueing explains at utilization u:
// tolerance * (d / c) * C(c, u) / (1 - u) + d.
double olb_threshold(double single_user_rt, int servers, double utilization, double tolerance);

// Inverse: the utilization at which the response-time factor reaches
// `factor` (> 1) with c servers, by bisection (factor is monotone in u).
double utilization_for_rt_factor(double factor, int servers);

}  // namespace sonde::stats
