// The probe clock's calibration: refinements must never make a converted
// time go backwards, whether the timer value is from after the newest
// reference pair or from before it (an event still in a thread's buffer
// when the writer refined).
#include "monitor/clock.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace sonde::monitor {
namespace {

void spin_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

void expect_monotonic_across_refinements(bool allow_tsc) {
  select_timer(allow_tsc);
  Calibration c;
  c.start();
  std::vector<uint64_t> ticks;
  for (int i = 0; i < 40; ++i) {
    const uint64_t raw = now_raw();
    ticks.push_back(raw);
    const int64_t before = c.to_epoch_ns(raw);
    spin_for(std::chrono::microseconds(100 + 50 * (i % 5)));
    c.refine();
    // A value from before the new reference converts as it did.
    EXPECT_EQ(c.to_epoch_ns(raw), before) << "refinement " << i;
    // The new segment starts no earlier than where the previous one ends.
    EXPECT_LE(c.to_epoch_ns(c.ref_raw() - 1), c.to_epoch_ns(c.ref_raw())) << "refinement " << i;
    ticks.push_back(c.ref_raw());
  }
  std::sort(ticks.begin(), ticks.end());
  for (size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_LE(c.to_epoch_ns(ticks[i - 1]), c.to_epoch_ns(ticks[i])) << "tick " << i;
  }
  // And it still tells the time: within 10 ms of the wall clock.
  EXPECT_NEAR(static_cast<double>(c.to_epoch_ns(now_raw())), static_cast<double>(epoch_ns_now()),
              1e7);
}

TEST(ClockCalibration, TscConversionNeverGoesBackwardsAcrossRefinements) {
  if (!tsc_is_invariant()) GTEST_SKIP() << "no invariant TSC on this CPU";
  expect_monotonic_across_refinements(true);
}

TEST(ClockCalibration, MonotonicClockConversionNeverGoesBackwardsAcrossRefinements) {
  expect_monotonic_across_refinements(false);
}

}  // namespace
}  // namespace sonde::monitor
