// The monitor's configuration text (`key = value` lines, from SONDE_CONFIG
// files) and its include/exclude patterns: parsed into a Config and a
// PatternSet, then every pattern is matched against the input's own lines.
// Bad keys and values must come back as an error string, never a crash.
#include <string>
#include <string_view>

#include "fuzz_input_file.hpp"
#include "monitor/config.hpp"
#include "monitor/patterns.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [config_text, pattern_text] = sonde::fuzz::split_at_nul(data, size, "");
  sonde::monitor::Config config;
  sonde::monitor::apply_config_text(config, config_text, "fuzz.conf");
  sonde::monitor::PatternSet patterns;
  if (patterns.parse(pattern_text).empty()) {
    size_t start = 0;
    while (start <= config_text.size()) {
      const size_t end = std::min(config_text.find('\n', start), config_text.size());
      patterns.monitored(config_text.substr(start, end - start));
      start = end + 1;
    }
  }
  return 0;
}
