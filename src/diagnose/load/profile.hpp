// Usage profile of the load driver (docs/diagnose/load.md): which requests
// a virtual user sends, in a fixed sequence or as a weighted mix, and how
// long it thinks between them.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace sonde::diagnose::load {

struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RequestTemplate {
  std::string name;    // service name in requests.csv, e.g. "GET /product"
  std::string method;  // GET, POST, PUT, DELETE
  std::string path;    // with placeholders {user}, {iteration}, {random:A:B}
  std::string body;    // sent as is (placeholders expanded), may be empty
  double weight = 1;   // mix mode only
};

struct UsageProfile {
  enum class Mode { sequence, mix };
  Mode mode = Mode::mix;
  std::vector<RequestTemplate> requests;
  double think_time_ms = 0;         // mean pause after each request
  double think_time_spread_ms = 0;  // uniform +- spread around the mean

  // Parses the JSON profile; ProfileError names the offending key.
  static UsageProfile parse(const std::string& json_text);
  static UsageProfile load(const std::string& path);
};

// Expands {user}, {iteration} and {random:A:B} in `text`.
std::string expand(const std::string& text, int user, std::uint64_t iteration, std::mt19937_64& rng);

// One user's walk through the profile: next() gives the request to send
// (cycling the sequence, or drawing from the mix).
class ProfileWalker {
 public:
  ProfileWalker(const UsageProfile& profile, std::uint64_t seed);
  const RequestTemplate& next();
  double think_time_ms();
  std::mt19937_64& rng() { return rng_; }

 private:
  const UsageProfile& profile_;
  std::mt19937_64 rng_;
  std::discrete_distribution<std::size_t> mix_;
  std::size_t position_ = 0;
};

}  // namespace sonde::diagnose::load
