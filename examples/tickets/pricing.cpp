// Section prices and the cache refresh's hashing: the CPU work of the
// ticket office.
#include <chrono>
#include <cmath>

#include "tickets.hpp"

namespace tickets {
namespace {

// xorshift64*: cheap, deterministic pseudo-random numbers in [0, 1).
double next_uniform(std::uint64_t& state) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return static_cast<double>((state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

}  // namespace

// Demand rises as the section fills and the show nears: 1 + occupancy² / 2,
// and up to 25 % more in the last 30 days.
double demand_multiplier(int free_seats, int total_seats, int days_to_show) {
  if (total_seats <= 0) return 1.0;
  const double occupancy = 1.0 - static_cast<double>(free_seats) / total_seats;
  const double urgency = days_to_show >= 30 ? 0.0 : 0.25 * (30 - days_to_show) / 30.0;
  return (1.0 + occupancy * occupancy / 2) * (1.0 + urgency);
}

// The same multiplier as the mean over simulated sales: each path sells the
// free seats day by day with a probability that grows with occupancy, and
// prices the section by the occupancy it reaches at the show.
double simulated_multiplier(int free_seats, int total_seats, int days_to_show, int paths,
                            std::uint64_t seed) {
  if (total_seats <= 0 || paths <= 0) return 1.0;
  std::uint64_t state = seed | 1;
  const int days = days_to_show < 1 ? 1 : (days_to_show > 90 ? 90 : days_to_show);
  double sum = 0;
  for (int p = 0; p < paths; ++p) {
    double sold = total_seats - free_seats;
    for (int d = 0; d < days; ++d) {
      const double rate = 0.002 + 0.02 * sold / total_seats;
      const double u = next_uniform(state);
      sold += u < rate * 8 ? 1.0 + 4 * u : 0.0;
      if (sold > total_seats) sold = total_seats;
    }
    const double occupancy = sold / total_seats;
    sum += 1.0 + occupancy * occupancy / 2;
  }
  const double urgency = days_to_show >= 30 ? 0.0 : 0.25 * (30 - days_to_show) / 30.0;
  return sum / paths * (1.0 + urgency);
}

std::uint64_t mix_rounds(std::uint64_t seed, std::int64_t rounds) {
  std::uint64_t x = seed;
  for (std::int64_t i = 0; i < rounds; ++i) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
  }
  return x;
}

std::int64_t rounds_for_ms(int ms) {
  using Clock = std::chrono::steady_clock;
  std::int64_t rounds = 1 << 16;
  volatile std::uint64_t sink = 0;
  for (;;) {
    const auto begin = Clock::now();
    sink = sink + mix_rounds(static_cast<std::uint64_t>(rounds), rounds);
    const double took_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    if (took_ms >= 20 || rounds > (std::int64_t{1} << 40))
      return static_cast<std::int64_t>(static_cast<double>(rounds) * ms /
                                       (took_ms > 0 ? took_ms : 1));
    rounds *= 2;
  }
}

}  // namespace tickets
