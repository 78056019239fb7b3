#include "analysis/text/duration_format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

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

bool parse_duration(std::string_view text, int64_t* ns) {
  size_t unit_at = 0;
  while (unit_at < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[unit_at])) || text[unit_at] == '.')) {
    ++unit_at;
  }
  const std::string_view number = text.substr(0, unit_at);
  const std::string_view unit = text.substr(unit_at);
  if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) {
    return false;
  }
  double scale = 0;
  if (unit.empty() || unit == "ns")
    scale = 1;
  else if (unit == "us" || unit == "µs")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "m" || unit == "min")
    scale = 60e9;
  else
    return false;
  const double value = std::strtod(std::string(number).c_str(), nullptr) * scale;
  if (!std::isfinite(value) || value >= 9.2e18) return false;
  *ns = static_cast<int64_t>(std::llround(value));
  return true;
}

}  // namespace sonde::analysis
