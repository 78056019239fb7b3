// Do the marked items of a sequence sit off-centre? A permutation test on
// the mean position of the marked items: its distance from the middle
// against the same distance when as many items are marked at random. It
// answers "do the violations pile up towards one end of the run" without a
// threshold on a correlation: the p-value is compared with alpha.
//
// Monte Carlo with a fixed seed, so a report is reproducible; with R
// resamples the smallest p is 1 / (R + 1). Equivalent, up to the Monte
// Carlo error, to a two-sided Wilcoxon rank-sum test of the marked
// positions against the unmarked ones, exact for any number of marks.
#pragma once

#include <cstdint>
#include <vector>

namespace sonde::stats {

struct PositionTest {
  // Mean position of the marked items, scaled to [0, 1] (0 = first item,
  // 1 = last); 0.5 when they sit around the middle.
  double mean_position = 0.5;
  double p_value = 1;  // two-sided
  bool valid = false;  // false with no marked or no unmarked item
};

PositionTest position_test(const std::vector<bool>& marked, int resamples = 9999,
                           uint64_t seed = 0x5eed5eed5eedULL);

}  // namespace sonde::stats
