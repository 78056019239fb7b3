// The diagnosis inputs a user writes by hand: the load driver's usage
// profile (JSON) and the diagnosis environment configuration (JSON), split
// at the first NUL byte. A parsed profile is also walked, expanding its
// placeholders ({user}, {iteration}, {random:A:B}) as the load driver does.
// Bad input must come back as ProfileError or ConfigError naming the
// problem; any other exception or a crash is a finding.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "diagnose/engine/config.hpp"
#include "diagnose/load/profile.hpp"
#include "fuzz_input_file.hpp"

namespace {

void walk_profile(const std::string& text) {
  using sonde::diagnose::load::UsageProfile;
  UsageProfile profile;
  try {
    profile = UsageProfile::parse(text);
  } catch (const sonde::diagnose::load::ProfileError&) {
    return;
  }
  sonde::diagnose::load::ProfileWalker walker(profile, 42);
  for (int i = 0; i < 8; ++i) {
    const sonde::diagnose::load::RequestTemplate& request = walker.next();
    (void)sonde::diagnose::load::expand(request.path, i % 3, static_cast<uint64_t>(i),
                                        walker.rng());
    (void)sonde::diagnose::load::expand(request.body, i % 3, static_cast<uint64_t>(i),
                                        walker.rng());
    (void)walker.think_time_ms();
  }
}

void parse_environment(const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return;  // not JSON: EnvironmentConfig::load reports that itself
  try {
    (void)sonde::diagnose::engine::EnvironmentConfig::parse(doc, "/nonexistent-base");
  } catch (const sonde::diagnose::engine::ConfigError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Without a NUL byte the whole input is tried as both.
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const auto [profile_text, environment_text] = sonde::fuzz::split_at_nul(data, size, all);
  walk_profile(std::string(profile_text));
  parse_environment(std::string(environment_text));
  return 0;
}
