// Durations for people: nanoseconds printed with a unit that keeps three
// significant digits ("812 ns", "3.42 µs", "12.3 ms", "1.25 s", "4821 s").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sonde::analysis {

std::string format_duration(double ns);

// Parses "250", "250ns", "3.5us", "3.5µs", "12ms", "1.5s", "2m" into ns.
// Returns false (and leaves *ns alone) for anything else, negative values
// and values beyond int64.
bool parse_duration(std::string_view text, int64_t* ns);

}  // namespace sonde::analysis
