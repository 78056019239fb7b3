#include "stats/binomial.hpp"

#include "stats/t_test.hpp"

namespace sonde::stats {

double binomial_upper_tail(std::size_t successes, std::size_t trials, double p) {
  if (successes == 0) return 1;
  if (successes > trials || p <= 0) return 0;
  if (p >= 1) return 1;
  return incomplete_beta(static_cast<double>(successes),
                         static_cast<double>(trials - successes + 1), p);
}

}  // namespace sonde::stats
