#include "analysis/duration_format.hpp"

#include <cmath>
#include <cstdio>

namespace sonde::analysis {

std::string format_duration(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  const char* sign = ns < 0 ? "-" : "";
  double v = std::fabs(ns);
  static constexpr const char* kUnits[] = {"ns", "µs", "ms", "s"};
  int unit = 0;
  // Move up a unit once the value would print as 1000 or more (999.6 -> "1.00 µs").
  while (unit < 3 && v >= 999.5) {
    v /= 1000.0;
    ++unit;
  }
  char buf[64];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%s%.0f %s", sign, v, kUnits[unit]);
  } else {
    const int decimals = v < 9.995 ? 2 : (v < 99.95 ? 1 : 0);
    std::snprintf(buf, sizeof buf, "%s%.*f %s", sign, decimals, v, kUnits[unit]);
  }
  return buf;
}

}  // namespace sonde::analysis
