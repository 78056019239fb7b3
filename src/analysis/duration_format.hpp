// Durations for people: nanoseconds printed with a unit that keeps three
// significant digits ("812 ns", "3.42 µs", "12.3 ms", "1.25 s", "4821 s").
#pragma once

#include <string>

namespace sonde::analysis {

std::string format_duration(double ns);

}  // namespace sonde::analysis
