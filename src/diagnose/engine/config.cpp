#include "diagnose/engine/config.hpp"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "diagnose/broker/redis_connection.hpp"
#include "diagnose/engine/cpu_list.hpp"

namespace sonde::diagnose::engine {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& key, const std::string& what) {
  throw ConfigError("config key '" + key + "': " + what);
}

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

void only_keys(const json& j, const std::string& prefix, const std::set<std::string>& known) {
  if (!j.is_object()) fail(prefix, "expected an object");
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) fail(join(prefix, key), "unknown key");
}

double number(const json& j, const std::string& prefix, const std::string& key, double fallback,
              double min, bool min_exclusive = false) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number()) fail(join(prefix, key), "expected a number");
  const double d = v.get<double>();
  if (d < min || (min_exclusive && d == min))
    fail(join(prefix, key),
         std::string("expected a number ") + (min_exclusive ? "> " : ">= ") + std::to_string(min));
  return d;
}

int integer(const json& j, const std::string& prefix, const std::string& key, int fallback,
            int min) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > 1000000)
    fail(join(prefix, key), "expected an integer >= " + std::to_string(min));
  return v.get<int>();
}

std::string text(const json& j, const std::string& prefix, const std::string& key,
                 const std::string& fallback, const std::set<std::string>& allowed = {}) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_string()) fail(join(prefix, key), "expected a string");
  std::string s = j.at(key).get<std::string>();
  if (!allowed.empty() && !allowed.count(s)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(join(prefix, key), "invalid value '" + s + "' (expected one of " + list + ")");
  }
  return s;
}

bool boolean(const json& j, const std::string& prefix, const std::string& key, bool fallback) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_boolean()) fail(join(prefix, key), "expected true or false");
  return j.at(key).get<bool>();
}

std::vector<std::string> strings(const json& j, const std::string& prefix, const std::string& key,
                                 std::vector<std::string> fallback) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_array()) fail(join(prefix, key), "expected an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v.at(i).is_string())
      fail(join(prefix, key) + "[" + std::to_string(i) + "]", "expected a string");
    out.push_back(v.at(i).get<std::string>());
  }
  return out;
}

Requirement requirement(const json& j, const std::string& prefix) {
  only_keys(j, prefix, {"threshold_ms", "percentile"});
  Requirement r;
  r.threshold_ms = number(j, prefix, "threshold_ms", r.threshold_ms, 0, true);
  r.percentile = number(j, prefix, "percentile", r.percentile, 0, true);
  if (r.percentile >= 1)
    fail(join(prefix, "percentile"), "expected a fraction between 0 and 1, e.g. 0.99");
  return r;
}

// A CPU list key ("0-1,3"); every CPU must be one this process may use.
std::vector<int> cpus(const json& j, const std::string& prefix, const std::string& key) {
  const std::string given = text(j, prefix, key, "");
  if (given.empty()) return {};
  std::vector<int> list;
  try {
    list = parse_cpu_list(given);
  } catch (const std::invalid_argument& e) {
    fail(join(prefix, key), e.what());
  }
  cpu_set_t usable;
  CPU_ZERO(&usable);
  if (::sched_getaffinity(0, sizeof usable, &usable) == 0) {
    std::vector<int> available;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &usable)) available.push_back(c);
    for (int c : list)
      if (!CPU_ISSET(c, &usable))
        fail(join(prefix, key), "CPU " + std::to_string(c) + " is not available here (available: " +
                                    cpu_list_text(available) + ")");
  }
  return list;
}

SutConfig parse_sut(const json& j, const std::string& base_dir) {
  const std::string p = "sut";
  only_keys(j, p,
            {"command", "port", "host", "ready_timeout_s", "stop_timeout_s", "monitor", "sonde",
             "patterns", "monitor_settings", "probe_control", "reload_ms", "restart", "cpus"});
  SutConfig s;
  s.command = strings(j, p, "command", {});
  if (s.command.empty())
    fail("sut.command", "required: the command line that starts the system under test");
  // A relative program path is relative to the config file (unless found on PATH later).
  if (s.command[0].find('/') != std::string::npos && fs::path(s.command[0]).is_relative())
    s.command[0] = (fs::path(base_dir) / s.command[0]).lexically_normal().string();
  s.port = integer(j, p, "port", 0, 0);
  if (s.port > 65535) fail("sut.port", "expected a port number up to 65535");
  s.host = text(j, p, "host", s.host);
  s.ready_timeout_s = number(j, p, "ready_timeout_s", s.ready_timeout_s, 0, true);
  s.stop_timeout_s = number(j, p, "stop_timeout_s", s.stop_timeout_s, 0, true);
  s.monitor = boolean(j, p, "monitor", s.monitor);
  s.sonde = text(j, p, "sonde", "");
  // The same for the sonde binary: a path with a '/' is the config's.
  if (s.sonde.find('/') != std::string::npos && fs::path(s.sonde).is_relative())
    s.sonde = (fs::path(base_dir) / s.sonde).lexically_normal().string();
  s.patterns = text(j, p, "patterns", s.patterns);
  if (j.contains("monitor_settings")) {
    const json& m = j.at("monitor_settings");
    if (!m.is_object()) fail("sut.monitor_settings", "expected an object of libsonde key -> value");
  }
  s.probe_control = text(j, p, "probe_control", s.probe_control, {"probes_file", "none"});
  s.reload_ms = integer(j, p, "reload_ms", s.reload_ms, 10);
  s.restart = text(j, p, "restart", s.restart, {"per_experiment", "per_series"});
  s.cpus = cpus(j, p, "cpus");
  return s;
}

PlanEntry plan_entry(const json& j, const std::string& prefix) {
  only_keys(j, prefix, {"kind", "steps", "users", "series", "phases", "probes"});
  PlanEntry e;
  if (!j.contains("kind")) fail(join(prefix, "kind"), "required");
  e.kind = text(j, prefix, "kind", "", {"single_user", "load", "scaling", "custom"});
  e.steps = integer(j, prefix, "steps", e.steps, 1);
  e.users = integer(j, prefix, "users", 0, 1);
  e.series = text(j, prefix, "series", e.kind == "custom" ? "custom" : e.kind);
  e.probes = strings(j, prefix, "probes", e.probes);
  for (std::size_t i = 0; i < e.probes.size(); ++i) {
    const auto& known = known_probes();
    if (std::find(known.begin(), known.end(), e.probes[i]) == known.end())
      fail(join(prefix, "probes") + "[" + std::to_string(i) + "]",
           "unknown probe '" + e.probes[i] + "'");
  }
  if (e.kind == "custom") {
    if (!j.contains("phases") || !j.at("phases").is_array() || j.at("phases").empty())
      fail(join(prefix, "phases"), "required for kind custom: a non-empty array");
    const json& phases = j.at("phases");
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const std::string pp = join(prefix, "phases") + "[" + std::to_string(i) + "]";
      const json& ph = phases.at(i);
      only_keys(ph, pp, {"users", "stable_s", "measure"});
      PhaseConfig c;
      c.users = integer(ph, pp, "users", 1, 1);
      c.stable_s = number(ph, pp, "stable_s", 0, 0);
      c.measure = boolean(ph, pp, "measure", true);
      e.phases.push_back(c);
    }
  } else if (j.contains("phases")) {
    fail(join(prefix, "phases"), "only for kind custom");
  }
  return e;
}

DatabaseConfig parse_database(const json& j) {
  const std::string p = "database";
  only_keys(j, p, {"kind", "conninfo", "start", "cpus", "sample", "sample_interval_ms"});
  DatabaseConfig d;
  if (!j.contains("kind")) fail("database.kind", "required (postgresql)");
  d.kind = text(j, p, "kind", "", {"postgresql"});
  d.start = boolean(j, p, "start", d.start);
  d.conninfo = text(j, p, "conninfo", "");
  if (d.start && !d.conninfo.empty())
    fail("database.conninfo", "not with \"start\": true (the engine's server has its own)");
  if (!d.start && d.conninfo.empty())
    fail("database.conninfo", "required unless \"start\": true (a libpq connection string)");
  d.cpus = cpus(j, p, "cpus");
  if (!d.cpus.empty() && !d.start)
    fail("database.cpus", "only with \"start\": true (the engine starts that server)");
  d.sample = boolean(j, p, "sample", d.sample);
  d.sample_interval_ms = integer(j, p, "sample_interval_ms", d.sample_interval_ms, 10);
  return d;
}

BrokerConfig parse_broker(const json& j) {
  const std::string p = "broker";
  only_keys(j, p, {"kind", "address", "start", "cpus", "sample", "sample_interval_ms", "queues"});
  BrokerConfig b;
  if (!j.contains("kind")) fail("broker.kind", "required (redis)");
  b.kind = text(j, p, "kind", "", {"redis"});
  b.start = boolean(j, p, "start", b.start);
  b.address = text(j, p, "address", "");
  if (b.start && !b.address.empty())
    fail("broker.address", "not with \"start\": true (the engine's server has its own)");
  if (!b.start && b.address.empty())
    fail("broker.address", "required unless \"start\": true (host:port)");
  if (!b.address.empty()) {
    try {
      broker::RedisAddress::parse(b.address);
    } catch (const std::invalid_argument& e) {
      fail("broker.address", e.what());
    }
  }
  b.cpus = cpus(j, p, "cpus");
  if (!b.cpus.empty() && !b.start)
    fail("broker.cpus", "only with \"start\": true (the engine starts that server)");
  b.sample = boolean(j, p, "sample", b.sample);
  b.sample_interval_ms = integer(j, p, "sample_interval_ms", b.sample_interval_ms, 10);
  b.queues = text(j, p, "queues", b.queues);
  if (b.queues.empty()) fail("broker.queues", "must not be empty (a SCAN pattern, e.g. queue:*)");
  return b;
}

}  // namespace

const std::vector<std::string>& known_probes() {
  static const std::vector<std::string> probes = {"response_time", "lock_wait", "database",
                                                  "messaging", "cpu"};
  return probes;
}

EnvironmentConfig EnvironmentConfig::parse(const json& j, const std::string& base_dir) {
  only_keys(j, "",
            {"sut", "profile", "max_users", "scaling_steps", "arrival_rate_per_user", "durations",
             "requirements", "samplers", "sampler_period_ms", "database", "broker", "experiments"});
  EnvironmentConfig c;
  c.raw = j;
  // Absolute, so that the paths below are too: a relative base ("." for a
  // config in the current folder) would turn "./bank" into "bank", which
  // execvp then looks for on PATH instead of beside the config.
  const std::string base =
      fs::absolute(base_dir.empty() ? "." : base_dir).lexically_normal().string();
  if (!j.contains("sut")) fail("sut", "required");
  c.sut = parse_sut(j.at("sut"), base);
  if (!j.contains("profile")) fail("profile", "required: the usage profile file");
  c.profile = text(j, "", "profile", "");
  if (fs::path(c.profile).is_relative())
    c.profile = (fs::path(base) / c.profile).lexically_normal().string();
  c.max_users = integer(j, "", "max_users", c.max_users, 1);
  c.scaling_steps = integer(j, "", "scaling_steps", 0, 2);
  c.arrival_rate_per_user = number(j, "", "arrival_rate_per_user", c.arrival_rate_per_user, 0);
  if (j.contains("durations")) {
    const json& d = j.at("durations");
    only_keys(d, "durations",
              {"warm_up_s", "ramp_up_s", "stable_s", "cool_down_s", "stability_max_s",
               "stability_window_s", "stability_tolerance"});
    c.durations.warm_up_s = number(d, "durations", "warm_up_s", c.durations.warm_up_s, 0);
    c.durations.ramp_up_s = number(d, "durations", "ramp_up_s", c.durations.ramp_up_s, 0);
    c.durations.stable_s = number(d, "durations", "stable_s", c.durations.stable_s, 0, true);
    c.durations.cool_down_s = number(d, "durations", "cool_down_s", c.durations.cool_down_s, 0);
    c.durations.stability_max_s =
        number(d, "durations", "stability_max_s", c.durations.stability_max_s, 0);
    c.durations.stability_window_s =
        number(d, "durations", "stability_window_s", c.durations.stability_window_s, 0, true);
    c.durations.stability_tolerance =
        number(d, "durations", "stability_tolerance", c.durations.stability_tolerance, 0);
  }
  if (j.contains("requirements")) {
    const json& r = j.at("requirements");
    only_keys(r, "requirements", {"default", "services"});
    if (r.contains("default"))
      c.default_requirement = requirement(r.at("default"), "requirements.default");
    if (r.contains("services")) {
      const json& services = r.at("services");
      if (!services.is_object())
        fail("requirements.services", "expected an object of service name -> requirement");
      for (const auto& [name, value] : services.items())
        c.requirements[name] = requirement(value, "requirements.services." + name);
    }
  }
  static const std::set<std::string> samplers = {"cpu",     "memory", "process",
                                                 "network", "disk",   "all"};
  c.samplers = strings(j, "", "samplers", {});
  for (std::size_t i = 0; i < c.samplers.size(); ++i)
    if (!samplers.count(c.samplers[i]))
      fail("samplers[" + std::to_string(i) + "]", "unknown sampler '" + c.samplers[i] + "'");
  c.sampler_period_ms = integer(j, "", "sampler_period_ms", c.sampler_period_ms, 10);
  if (j.contains("database")) c.database = parse_database(j.at("database"));
  if (j.contains("broker")) c.broker = parse_broker(j.at("broker"));
  for (std::size_t i = 0; i < c.sut.command.size(); ++i)
    if (c.sut.command[i].find("{database}") != std::string::npos && c.database.kind.empty())
      fail("sut.command[" + std::to_string(i) + "]",
           "uses {database}, but no \"database\" is configured");
  for (std::size_t i = 0; i < c.sut.command.size(); ++i)
    if (c.sut.command[i].find("{broker}") != std::string::npos && c.broker.kind.empty())
      fail("sut.command[" + std::to_string(i) + "]",
           "uses {broker}, but no \"broker\" is configured");
  if (j.contains("experiments") && j.contains("scaling_steps"))
    fail("scaling_steps", "only without \"experiments\" (each scaling entry has its own steps)");
  if (j.contains("experiments")) {
    const json& e = j.at("experiments");
    if (!e.is_array()) fail("experiments", "expected an array");
    for (std::size_t i = 0; i < e.size(); ++i)
      c.experiments.push_back(plan_entry(e.at(i), "experiments[" + std::to_string(i) + "]"));
  }
  if (j.contains("sut") && j.at("sut").contains("monitor_settings")) {
    for (const auto& [key, value] : j.at("sut").at("monitor_settings").items()) {
      if (!value.is_string() && !value.is_number() && !value.is_boolean())
        fail("sut.monitor_settings." + key, "expected a string, number or boolean");
      c.sut.monitor_settings[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  return c;
}

EnvironmentConfig EnvironmentConfig::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read config " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  json j;
  try {
    j = json::parse(buffer.str());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number overflow
    throw ConfigError(path + ": not valid JSON: " + e.what());
  }
  try {
    return parse(
        j, fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string());
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

}  // namespace sonde::diagnose::engine
