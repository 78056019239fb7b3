// The experiment engine of `sonde diagnose` (docs/diagnose/config.md):
// runs experiments against the system under test and stores each in the
// layout of docs/diagnose/experiment-data.md, which the heuristics read.
//
// Per experiment: start the SUT (under `sonde run`, its log going to the
// experiment's log/ directory; with restart=per_series one SUT serves a
// whole series), warm up, ramp up, switch on exactly the experiment's
// probes at run time (patterns_file and probes_file, re-read by libsonde
// without a restart), measure the stable phase, switch them off, cool
// down, stop the SUT. An experiment asked for twice is run once (reuse).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "diagnose/broker/redis_server.hpp"
#include "diagnose/database/postgres_server.hpp"
#include "diagnose/engine/config.hpp"
#include "diagnose/heuristic.hpp"
#include "diagnose/load/driver.hpp"
#include "diagnose/load/profile.hpp"

namespace sonde::diagnose::engine {

// One measured phase.
struct ExperimentSpec {
  std::string id;    // e.g. "load-u40", "scaling-s3-u24", "ramp-w2"
  std::string kind;  // single_user | load | scaling | custom
  int users = 1;
  int step = 0;
  std::string series;
  std::vector<std::string> probes = {"response_time"};
  double stable_s = 0;  // 0: the config's durations.stable_s
};

// An unmeasured load phase inside a custom series (e.g. the Ramp's stimulation).
struct LoadPhase {
  int users = 1;
  double duration_s = 0;
};

// One SUT lifetime: measured experiments, optionally separated by
// unmeasured load phases (custom series). Step i of `phases` is either.
struct SeriesPlan {
  std::string series;
  std::vector<std::variant<ExperimentSpec, LoadPhase>> phases;
};

struct ExperimentResult {
  ExperimentSpec spec;
  std::filesystem::path dir;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;
  bool complete = false;
  std::string reason;
  // Samplers outside the SUT (the database's): source -> {"status": ok |
  // failed, "reason", "samples", "cpu"}; their data is in samples.csv.
  nlohmann::json samplers = nlohmann::json::object();
  // With durations.stability_max_s: {"waited_s", "reached"} of the wait
  // before the stable phase; null without.
  nlohmann::json stability;
  // Who used the CPUs in the stable phase (cpu_accounting.hpp): null when
  // the phase did not both begin and end; {"error"} when /proc was unreadable.
  nlohmann::json cpu_accounting;
};

// User counts of a scaling series: n steps from 1 to max in equal steps,
// truncated to integers (DynamicSpotter's executeDefaultExperimentSeries);
// n <= 1 gives {max}. Duplicates (n > max) are dropped.
std::vector<int> scaling_users(int max_users, int steps);

// The experiments a config's "experiments" list describes, in order.
std::vector<SeriesPlan> plan_from_config(const EnvironmentConfig& config);

// The libsonde samplers a SUT is started with for `experiments`: the
// config's `samplers`, plus the CPU sampler when one of the experiments
// needs the `cpu` probe (One Lane Bridge, Database Congestion and Database
// OLB read its records), unless the config's list has it ("cpu", "all").
std::vector<std::string> sut_samplers(const std::vector<std::string>& configured,
                                      const std::vector<const ExperimentSpec*>& experiments);
// The libsonde settings (`sonde run --set` values) that start those
// samplers at the config's `sampler_period_ms`; none when no sampler runs.
std::vector<std::string> sampler_settings(const EnvironmentConfig& config,
                                          const std::vector<const ExperimentSpec*>& experiments);
SeriesPlan single_user_plan(std::vector<std::string> probes);
SeriesPlan load_plan(int users, std::vector<std::string> probes);
SeriesPlan scaling_plan(int max_users, int steps, std::vector<std::string> probes);
// `windows` measured single-user experiments (<series>-w<k>), separated by
// unmeasured load phases of `load_users` for `load_s`, on one SUT: the
// Ramp's time windows.
SeriesPlan windows_plan(const std::string& series, int windows, int load_users, double load_s,
                        std::vector<std::string> probes);
// The experiments the heuristics need (hierarchy.hpp merged_needs), for a
// config without "experiments": the single-user test first, then the
// scaling series, load tests and custom series (as windows_plan; the
// load phases at max_users for durations.stable_s).
std::vector<SeriesPlan> plan_from_needs(const EnvironmentConfig& config,
                                        const std::vector<ExperimentNeed>& needs);

class Engine {
 public:
  // Writes into `out_dir` (created); run.json is written at once, marked
  // incomplete until finish().
  Engine(EnvironmentConfig config, std::filesystem::path out_dir);
  ~Engine();

  // Runs one series (reusing experiments already run). Returns false if the
  // run cannot go on (SUT failed, cancelled); reason() says why.
  bool run(const SeriesPlan& plan);
  // Runs every series; stops at the first failure.
  bool run_all(const std::vector<SeriesPlan>& plans);
  // Marks run.json complete (if nothing failed) with the end time.
  void finish();

  const std::map<std::string, ExperimentResult>& results() const { return results_; }
  const std::string& reason() const { return reason_; }
  // Stops the run: the first reason is kept, run.json says incomplete.
  void fail(const std::string& reason);
  bool failed() const { return !reason_.empty(); }

  // Set (e.g. from a SIGINT handler) to stop: the running experiment ends,
  // the SUT is stopped, run.json says incomplete "cancelled".
  std::atomic<bool>& cancel_flag() { return cancel_; }
  // Progress lines go here (default: stderr); plan totals give the ETA.
  void set_progress(std::function<void(const std::string&)> sink) { progress_ = std::move(sink); }
  // at_most: the plans are the most that may still run (a search that may
  // prune them), so the ETA is shown as an upper bound.
  void expect_total(const std::vector<SeriesPlan>& plans, bool at_most = false);

 private:
  // One SUT process and what the experiments it serves share (engine_run.cpp).
  struct RunningSut;
  // Consecutive phases of `plan` on one SUT: started, driven, measured, stopped.
  bool run_segment(const SeriesPlan& plan, const std::vector<std::size_t>& segment);
  // The SUT's command line: under `sonde run` when monitored, the config's
  // command with {port}, {database} and {broker} filled in.
  std::vector<std::string> sut_command(const RunningSut& sut,
                                       const std::vector<const ExperimentSpec*>& todo) const;
  // Starts it and waits until it accepts connections; false (after fail(),
  // with the first experiment recorded as failed) when it cannot.
  bool start_sut(RunningSut& sut, const std::vector<const ExperimentSpec*>& todo);
  // Drives load against it while watching it and the cancel flag.
  load::LoadResult drive(RunningSut& sut, int users, double ramp_up, double stable,
                         double cool_down, bool settle, load::LoadOptions::Callback begin,
                         load::LoadOptions::Callback end);
  // Runs and stores one experiment; false when it is incomplete.
  bool measure(RunningSut& sut, const ExperimentSpec& spec);
  double planned_seconds(const SeriesPlan& plan) const;
  void write_run_json();
  void write_experiment_json(const ExperimentResult& r);
  void switch_probes(const std::filesystem::path& patterns_file,
                     const std::filesystem::path& probes_file,
                     const std::vector<std::string>& probes);
  void report(const std::string& what);
  // Starts the throw-away database server when the config asks for one;
  // false (after fail()) when it cannot start.
  bool ensure_database();
  // The same for the throw-away message broker.
  bool ensure_broker();
  // The processes whose CPU time is the diagnosis' own: this process (the
  // load driver, the SUT and a broker are its descendants) and the
  // database server it started (a daemon, not a descendant).
  std::vector<pid_t> cpu_roots() const;

  EnvironmentConfig config_;
  std::filesystem::path out_;
  load::UsageProfile profile_;
  std::map<std::string, ExperimentResult> results_;
  std::vector<std::string> order_;
  std::int64_t start_ns_ = 0;
  std::int64_t end_ns_ = 0;
  bool finished_ = false;
  bool total_is_bound_ = false;
  std::string reason_;
  std::atomic<bool> cancel_{false};
  std::function<void(const std::string&)> progress_;
  double total_s_ = 0;
  double done_s_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::unique_ptr<database::PostgresServer> database_server_;
  std::unique_ptr<broker::RedisServer> broker_server_;
};

// Installs a SIGINT/SIGTERM handler that sets `engine`'s cancel flag
// (a second signal restores the default action, so it still kills).
void cancel_on_signals(Engine& engine);

}  // namespace sonde::diagnose::engine
