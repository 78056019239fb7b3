// Reading and tokenising /proc text files without exceptions. /proc files
// report a size of 0, so they are read to EOF rather than by their size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::monitor::samplers {

// Reads the whole file into `out`. On failure returns false and sets `error`
// to "<path>: <reason>".
bool read_text_file(const std::string& path, std::string* out, std::string* error);

// Calls `fn(line)` for every line of `text`, without the trailing '\n'.
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    fn(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Splits on spaces and tabs, dropping empty tokens. Reuses `tokens`.
void split_fields(std::string_view line, std::vector<std::string_view>& tokens);

std::string_view trim(std::string_view s);

// Whole-token decimal parses: "12x", "", "-1" (for unsigned) are rejected.
bool parse_u64(std::string_view token, uint64_t* out);
bool parse_i64(std::string_view token, int64_t* out);

// Counter difference that never goes negative: kernels occasionally step a
// counter back (iowait on some versions, hot-plugged CPUs, re-created devices),
// and a negative delta must not turn into a huge unsigned one.
inline uint64_t counter_delta(uint64_t now, uint64_t before) {
  return now >= before ? now - before : 0;
}

// Unsigned to int64 for record fields; /proc counters never reach 2^63, but a
// corrupted value must not wrap to a negative number.
inline int64_t to_i64(uint64_t v) {
  return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
}

}  // namespace sonde::monitor::samplers
