// The measurement-environment description of `sonde diagnose`
// (docs/diagnose/config.md): how to start the system under test, the
// workload, experiment durations, requirements and samplers.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace sonde::diagnose::engine {

// A bad configuration; the message names the key, e.g.
// "config key 'durations.stable_s': expected a number > 0".
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Requirement {
  double threshold_ms = 1000;  // DynamicSpotter's default requirement
  double percentile = 0.99;    // fraction of requests that must meet it
};

struct SutConfig {
  std::vector<std::string> command;  // argv; "{port}" is replaced by the port
  int port = 0;                      // 0: the engine picks a free loopback port
  std::string host = "127.0.0.1";
  double ready_timeout_s = 30;           // until the port accepts connections
  double stop_timeout_s = 10;            // SIGINT, then SIGKILL after this
  bool monitor = true;                   // wrap with `sonde run`
  std::string sonde;                     // sonde binary for `sonde run` (default: this one)
  std::string patterns = "-*;+shop::*";  // what the response-time probe monitors
  std::map<std::string, std::string> monitor_settings;  // extra `sonde run --set key=value`
  std::string probe_control = "probes_file";  // or "none": libsonde without run-time probes
  int reload_ms = 100;                        // patterns/probes file re-read period in the SUT
  std::string restart = "per_experiment";     // or "per_series"
  std::vector<int> cpus;                      // run it on these CPUs only (empty: any)
};

// The database server the system under test uses ("database"): sampled
// during every measured phase (pg_stat_activity, pg_locks, server CPU),
// and optionally started by the engine as a throw-away cluster.
struct DatabaseConfig {
  std::string kind;       // "" (none) or "postgresql"
  std::string conninfo;   // libpq connection string; with start: set by the engine
  bool start = false;     // a throw-away server on 127.0.0.1 for this run
  std::vector<int> cpus;  // with start: run the server on these CPUs only (empty: any)
  bool sample = true;     // run the database sampler in measured phases
  int sample_interval_ms = 250;
};

// The message broker the system under test uses ("broker"): sampled
// during every measured phase (messages, commands, server CPU, queue
// lengths), and optionally started by the engine as a throw-away server.
struct BrokerConfig {
  std::string kind;       // "" (none) or "redis"
  std::string address;    // host:port; with start: set by the engine
  bool start = false;     // a throw-away server on 127.0.0.1 for this run
  std::vector<int> cpus;  // with start: run the server on these CPUs only (empty: any)
  bool sample = true;     // run the broker sampler in measured phases
  int sample_interval_ms = 250;
  std::string queues = "*";  // SCAN pattern of the lists that are queues
};

struct Durations {
  double warm_up_s = 0;    // unmeasured load with 1 user after each SUT start
  double ramp_up_s = 1;    // users start spread over this
  double stable_s = 10;    // measured
  double cool_down_s = 0;  // unmeasured load after the stable phase
  // Wait for stability between ramp-up and stable phase (0 = no wait):
  // until the median response time of one window is within the tolerance
  // of the window before, at most this long (load::LoadOptions).
  double stability_max_s = 10;
  double stability_window_s = 1;
  double stability_tolerance = 0.2;
};

// One entry of "experiments": what to run when the config alone drives the
// engine (`sonde diagnose` plans its own from the heuristics' needs).
struct PhaseConfig {
  int users = 1;
  double stable_s = 0;  // 0: the config's durations.stable_s
  bool measure = true;
};

struct PlanEntry {
  std::string kind;                 // single_user | load | scaling | custom
  int steps = 4;                    // scaling
  int users = 0;                    // load: 0 = max_users
  std::string series;               // custom: series name (ids <series>-w<k>)
  std::vector<PhaseConfig> phases;  // custom
  std::vector<std::string> probes = {"response_time"};
};

struct EnvironmentConfig {
  SutConfig sut;
  std::string profile;  // usage profile path (relative paths: to the config file)
  int max_users = 10;
  // Plans made from the heuristics' needs (no "experiments"): the scaling
  // series' steps; 0 = as the heuristics ask (5, the thesis' default).
  int scaling_steps = 0;
  // 0: closed workload (each user waits for its answer, then thinks, as
  // the profile says). > 0: open workload, requests arrive as a Poisson
  // process at this rate times the users, served by that many connections
  // (docs/diagnose/load.md): pauses of the system under test then delay
  // every request that arrives meanwhile, as with real, independent users.
  double arrival_rate_per_user = 0;
  Durations durations;
  Requirement default_requirement;
  std::map<std::string, Requirement> requirements;  // per service name
  std::vector<std::string> samplers;  // libsonde samplers: cpu, memory, process, network, disk
  // The SUT's samplers' period. 250 ms, not libsonde's 1 s: One Lane Bridge
  // bounds each step's CPU utilization by its batch means, which want 20
  // instants or more; a 10-16 s stable phase gives 40-64 of them.
  int sampler_period_ms = 250;
  DatabaseConfig database;
  BrokerConfig broker;
  std::vector<PlanEntry> experiments;
  nlohmann::json raw;  // as given, stored in run.json

  static EnvironmentConfig parse(const nlohmann::json& j, const std::string& base_dir = ".");
  static EnvironmentConfig load(const std::string& path);
};

// Probe names of experiment-data.md and the libsonde keys that switch them.
const std::vector<std::string>& known_probes();

}  // namespace sonde::diagnose::engine
