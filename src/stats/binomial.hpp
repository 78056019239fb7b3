// The binomial distribution's upper tail, for the heuristics' counting
// tests (a hiccup period's violating requests, a query's requests against
// wrong trace matches, a thread's first responses, a component's share of
// the messages).
#pragma once

#include <cstddef>

namespace sonde::stats {

// P(X >= successes) for X ~ Binomial(trials, p): the one-sided p-value of
// observing at least `successes` in `trials` when each succeeds with
// probability p. 1 for successes 0; 0 for successes > trials; p outside
// (0, 1) is taken as its bound (0: no success possible, 1: every trial
// succeeds). By the regularized incomplete beta function,
// P(X >= k) = I_p(k, n - k + 1), as R's pbinom(k - 1, n, p, lower = FALSE).
double binomial_upper_tail(std::size_t successes, std::size_t trials, double p);

}  // namespace sonde::stats
