#include "diagnose/load/profile.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace sonde::diagnose::load {
namespace {

using nlohmann::json;

const std::set<std::string> kMethods = {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"};

double number(const json& j, const std::string& key, double fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number() || v.get<double>() < 0)
    throw ProfileError("profile key '" + where + key + "': expected a number >= 0");
  return v.get<double>();
}

std::string text(const json& j, const std::string& key, const std::string& fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_string()) throw ProfileError("profile key '" + where + key + "': expected a string");
  return j.at(key).get<std::string>();
}

}  // namespace

UsageProfile UsageProfile::parse(const std::string& json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number overflow
    throw ProfileError(std::string("profile is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ProfileError("profile: expected a JSON object");
  static const std::set<std::string> known = {"mode", "requests", "think_time_ms", "think_time_spread_ms"};
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) throw ProfileError("profile key '" + key + "': unknown key");
  UsageProfile p;
  const std::string mode = text(j, "mode", "mix", "");
  if (mode == "mix")
    p.mode = Mode::mix;
  else if (mode == "sequence")
    p.mode = Mode::sequence;
  else
    throw ProfileError("profile key 'mode': expected mix or sequence, got '" + mode + "'");
  p.think_time_ms = number(j, "think_time_ms", 0, "");
  p.think_time_spread_ms = number(j, "think_time_spread_ms", 0, "");
  if (p.think_time_spread_ms > p.think_time_ms)
    throw ProfileError("profile key 'think_time_spread_ms': larger than think_time_ms");
  if (!j.contains("requests") || !j.at("requests").is_array() || j.at("requests").empty())
    throw ProfileError("profile key 'requests': expected a non-empty array");
  const json& requests = j.at("requests");
  double total_weight = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const json& r = requests.at(i);
    const std::string where = "requests[" + std::to_string(i) + "].";
    if (!r.is_object()) throw ProfileError("profile key 'requests[" + std::to_string(i) + "]': expected an object");
    static const std::set<std::string> known_request = {"name", "method", "path", "body", "weight"};
    for (const auto& [key, value] : r.items())
      if (!known_request.count(key)) throw ProfileError("profile key '" + where + key + "': unknown key");
    RequestTemplate t;
    t.method = text(r, "method", "GET", where);
    if (!kMethods.count(t.method)) throw ProfileError("profile key '" + where + "method': unknown method '" + t.method + "'");
    t.path = text(r, "path", "", where);
    if (t.path.empty() || t.path[0] != '/') throw ProfileError("profile key '" + where + "path': expected a path starting with /");
    t.body = text(r, "body", "", where);
    t.weight = number(r, "weight", 1, where);
    const std::string bare = t.path.substr(0, t.path.find('?'));
    t.name = text(r, "name", t.method + " " + bare, where);
    total_weight += t.weight;
    p.requests.push_back(std::move(t));
  }
  if (p.mode == Mode::mix && total_weight <= 0) throw ProfileError("profile key 'requests': all weights are 0");
  return p;
}

UsageProfile UsageProfile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ProfileError("cannot read profile " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return parse(buffer.str());
  } catch (const ProfileError& e) {
    throw ProfileError(path + ": " + e.what());
  }
}

std::string expand(const std::string& text, int user, std::uint64_t iteration, std::mt19937_64& rng) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    const std::string token = text.substr(open + 1, close - open - 1);
    long long lo = 0, hi = 0;
    char tail = 0;
    if (token == "user") {
      out += std::to_string(user);
    } else if (token == "iteration") {
      out += std::to_string(iteration);
    } else if (std::sscanf(token.c_str(), "random:%lld:%lld%c", &lo, &hi, &tail) == 2 && lo <= hi) {
      out += std::to_string(std::uniform_int_distribution<long long>(lo, hi)(rng));
    } else {
      out.append(text, open, close - open + 1);  // not a placeholder: keep it
    }
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

ProfileWalker::ProfileWalker(const UsageProfile& profile, std::uint64_t seed) : profile_(profile), rng_(seed) {
  std::vector<double> weights;
  for (const auto& r : profile.requests) weights.push_back(r.weight);
  mix_ = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

const RequestTemplate& ProfileWalker::next() {
  if (profile_.mode == UsageProfile::Mode::sequence) return profile_.requests[position_++ % profile_.requests.size()];
  return profile_.requests[mix_(rng_)];
}

double ProfileWalker::think_time_ms() {
  if (profile_.think_time_spread_ms <= 0) return profile_.think_time_ms;
  return std::uniform_real_distribution<double>(profile_.think_time_ms - profile_.think_time_spread_ms,
                                                profile_.think_time_ms + profile_.think_time_spread_ms)(rng_);
}

}  // namespace sonde::diagnose::load
