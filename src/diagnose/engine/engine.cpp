// The experiment engine's plans (from a config's "experiments" or from the
// heuristics' needs), its run files (run.json, experiment.json), the probe
// switch files and the throw-away database and broker servers. Running a
// series (the SUT, the load, one experiment's measurement) is in
// engine_run.cpp.
#include "diagnose/engine/engine.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "diagnose/broker/redis_server.hpp"
#include "diagnose/engine/cpu_list.hpp"
#include "diagnose/load/driver.hpp"

namespace sonde::diagnose::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// libsonde keys that switch each probe of experiment-data.md (from the
// probes work: docs/probes.md). response_time is switched by patterns.
const std::map<std::string, std::string> kProbeKeys = {{"lock_wait", "probe_lock_wait"},
                                                       {"database", "probe_database"},
                                                       {"messaging", "probe_messaging"}};

void write_file_atomically(const fs::path& path, const std::string& content) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);  // libsonde never reads a half-written file
}

// Patterns are ';'-separated in the config; patterns_file takes one rule per line.
std::string patterns_lines(const std::string& patterns) {
  std::string out;
  for (char c : patterns) out += c == ';' ? '\n' : c;
  return out;
}

std::atomic<Engine*> g_signal_engine{nullptr};

void on_signal(int sig) {
  if (Engine* e = g_signal_engine.load()) e->cancel_flag().store(true);
  ::signal(sig, SIG_DFL);  // a second one ends the process
  // Said at once: analysing a large log between two experiments can take
  // minutes, and a signal that seems ignored gets a SIGKILL instead.
  static constexpr char kSaid[] =
      "sonde: stopping after the current experiment or analysis step (signal again to stop at "
      "once)\n";
  const ssize_t written = ::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
  (void)written;
}

}  // namespace

std::vector<int> scaling_users(int max_users, int steps) {
  std::vector<int> users;
  if (steps <= 1 || max_users <= 1) return {max_users};
  const double step = static_cast<double>(max_users - 1) / (steps - 1);
  for (int i = 0; i < steps; ++i) {
    const int u = i == steps - 1 ? max_users : 1 + static_cast<int>(step * i);
    if (users.empty() || users.back() != u) users.push_back(u);
  }
  return users;
}

SeriesPlan single_user_plan(std::vector<std::string> probes) {
  ExperimentSpec e;
  e.id = "single-u1";
  e.kind = "single_user";
  e.series = "single_user";
  e.probes = std::move(probes);
  return {"single_user", {e}};
}

SeriesPlan load_plan(int users, std::vector<std::string> probes) {
  ExperimentSpec e;
  e.id = "load-u" + std::to_string(users);
  e.kind = "load";
  e.users = users;
  e.series = "load";
  e.probes = std::move(probes);
  return {"load", {e}};
}

SeriesPlan scaling_plan(int max_users, int steps, std::vector<std::string> probes) {
  SeriesPlan plan{"scaling", {}};
  const auto users = scaling_users(max_users, steps);
  for (std::size_t i = 0; i < users.size(); ++i) {
    ExperimentSpec e;
    e.step = static_cast<int>(i) + 1;
    e.users = users[i];
    e.id = "scaling-s" + std::to_string(e.step) + "-u" + std::to_string(e.users);
    e.kind = "scaling";
    e.series = "scaling";
    e.probes = probes;
    plan.phases.emplace_back(e);
  }
  return plan;
}

SeriesPlan windows_plan(const std::string& series, int windows, int load_users, double load_s,
                        std::vector<std::string> probes) {
  SeriesPlan plan{series, {}};
  for (int w = 1; w <= windows; ++w) {
    if (w > 1) plan.phases.emplace_back(LoadPhase{load_users, load_s});
    ExperimentSpec e;
    e.step = w;
    e.id = series + "-w" + std::to_string(w);
    e.kind = "custom";
    e.series = series;
    e.users = 1;
    e.probes = probes;
    plan.phases.emplace_back(e);
  }
  return plan;
}

std::vector<SeriesPlan> plan_from_needs(const EnvironmentConfig& config,
                                        const std::vector<ExperimentNeed>& needs) {
  std::vector<SeriesPlan> plans;
  // Single-user first: the other experiments are judged against it.
  for (const char* kind : {"single_user", "scaling", "load", "custom"}) {
    for (const ExperimentNeed& need : needs) {
      if (need.kind != kind) continue;
      if (need.kind == "single_user") plans.push_back(single_user_plan(need.probes));
      if (need.kind == "scaling")
        plans.push_back(scaling_plan(config.max_users,
                                     config.scaling_steps > 0 ? config.scaling_steps : need.steps,
                                     need.probes));
      if (need.kind == "load") plans.push_back(load_plan(config.max_users, need.probes));
      if (need.kind == "custom") {
        plans.push_back(windows_plan(need.series, need.steps, config.max_users,
                                     config.durations.stable_s, need.probes));
      }
    }
  }
  return plans;
}

std::vector<SeriesPlan> plan_from_config(const EnvironmentConfig& config) {
  std::vector<SeriesPlan> plans;
  for (const auto& entry : config.experiments) {
    if (entry.kind == "single_user") plans.push_back(single_user_plan(entry.probes));
    if (entry.kind == "load")
      plans.push_back(load_plan(entry.users > 0 ? entry.users : config.max_users, entry.probes));
    if (entry.kind == "scaling")
      plans.push_back(scaling_plan(config.max_users, entry.steps, entry.probes));
    if (entry.kind == "custom") {
      SeriesPlan plan{entry.series, {}};
      int window = 0;
      for (const auto& phase : entry.phases) {
        if (!phase.measure) {
          plan.phases.emplace_back(LoadPhase{
              phase.users, phase.stable_s > 0 ? phase.stable_s : config.durations.stable_s});
          continue;
        }
        ExperimentSpec e;
        e.step = ++window;
        e.id = entry.series + "-w" + std::to_string(window);
        e.kind = "custom";
        e.series = entry.series;
        e.users = phase.users;
        e.stable_s = phase.stable_s;
        e.probes = entry.probes;
        plan.phases.emplace_back(e);
      }
      plans.push_back(std::move(plan));
    }
  }
  return plans;
}

Engine::Engine(EnvironmentConfig config, fs::path out_dir)
    : config_(std::move(config)),
      out_(std::move(out_dir)),
      started_(std::chrono::steady_clock::now()) {
  profile_ = load::UsageProfile::load(config_.profile);
  progress_ = [](const std::string& line) { std::cerr << "sonde: " << line << std::endl; };
  // The data directory holds one run: an earlier run's experiments (the
  // same --out again) would be read as this run's by the diagnosis.
  const fs::path experiments = out_ / "experiments";
  std::error_code ec;
  if (fs::is_directory(experiments, ec) && !fs::is_empty(experiments, ec)) {
    report("removing the experiments of an earlier run in " + experiments.string());
    fs::remove_all(experiments, ec);
    if (ec)
      throw std::runtime_error("cannot remove the earlier run's experiments in " +
                               experiments.string() + ": " + ec.message());
  }
  fs::create_directories(experiments);
  start_ns_ = load::epoch_ns();
  write_run_json();
}

Engine::~Engine() {
  if (g_signal_engine.load() == this) g_signal_engine.store(nullptr);
}

void cancel_on_signals(Engine& engine) {
  g_signal_engine.store(&engine);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void Engine::report(const std::string& what) {
  if (progress_) progress_(what);
}

void Engine::fail(const std::string& reason) {
  if (reason_.empty()) reason_ = reason;
  write_run_json();
}

double Engine::planned_seconds(const SeriesPlan& plan) const {
  const auto& d = config_.durations;
  double s = d.warm_up_s;
  for (const auto& phase : plan.phases) {
    if (const auto* e = std::get_if<ExperimentSpec>(&phase)) {
      if (results_.count(e->id)) continue;
      s += d.ramp_up_s + (e->stable_s > 0 ? e->stable_s : d.stable_s) + d.cool_down_s +
           d.stability_max_s;
    } else {
      s += std::get<LoadPhase>(phase).duration_s;
    }
  }
  return s;
}

void Engine::expect_total(const std::vector<SeriesPlan>& plans, bool at_most) {
  total_is_bound_ = at_most;
  total_s_ = done_s_;
  for (const auto& p : plans) total_s_ += planned_seconds(p);
}

void Engine::write_run_json() {
  json experiments = json::array();
  for (const auto& id : order_) experiments.push_back(id);
  json requirements = {{"default",
                        {{"threshold_ms", config_.default_requirement.threshold_ms},
                         {"percentile", config_.default_requirement.percentile}}},
                       {"services", json::object()}};
  for (const auto& [name, r] : config_.requirements)
    requirements["services"][name] = {{"threshold_ms", r.threshold_ms},
                                      {"percentile", r.percentile}};
  json run = {
      {"config", config_.raw},
      {"max_users", config_.max_users},
      {"requirements", requirements},
      {"cores", std::thread::hardware_concurrency()},
      {"start_ns", start_ns_},
      {"end_ns", end_ns_},
      {"status", finished_ && reason_.empty() ? "complete" : "incomplete"},
      {"reason", !reason_.empty() ? reason_ : (finished_ ? "" : "running (or interrupted)")},
      {"experiments", experiments}};
  write_file_atomically(out_ / "run.json", run.dump(2) + "\n");
}

void Engine::write_experiment_json(const ExperimentResult& r) {
  json e = {{"id", r.spec.id},
            {"kind", r.spec.kind},
            {"users", r.spec.users},
            {"step", r.spec.step},
            {"series", r.spec.series},
            {"start_ns", r.start_ns},
            {"end_ns", r.end_ns},
            {"probes", r.spec.probes},
            {"requests", r.requests},
            {"errors", r.errors},
            {"status", r.complete ? "complete" : "failed"},
            {"reason", r.reason}};
  if (!r.samplers.empty()) e["samplers"] = r.samplers;
  if (!r.stability.is_null()) e["stability"] = r.stability;
  if (!r.cpu_accounting.is_null()) e["cpu_accounting"] = r.cpu_accounting;
  if (!config_.sut.cpus.empty()) e["sut_cpus"] = config_.sut.cpus;
  write_file_atomically(r.dir / "experiment.json", e.dump(2) + "\n");
}

void Engine::switch_probes(const fs::path& patterns_file, const fs::path& probes_file,
                           const std::vector<std::string>& probes) {
  const std::set<std::string> on(probes.begin(), probes.end());
  // Outside a stable phase nothing is monitored: "-*" excludes every operation.
  write_file_atomically(
      patterns_file,
      (on.count("response_time") ? patterns_lines(config_.sut.patterns) : std::string("-*")) +
          "\n");
  if (config_.sut.probe_control == "probes_file") {
    std::string lines = "# written by the sonde experiment engine\n";
    for (const auto& [probe, key] : kProbeKeys)
      lines += key + " = " + (on.count(probe) ? "true" : "false") + "\n";
    write_file_atomically(probes_file, lines);
  }
}

bool Engine::ensure_database() {
  if (!config_.database.start || database_server_) return true;
  report("starting a throw-away PostgreSQL server");
  try {
    database_server_ = database::PostgresServer::start(config_.database.cpus);
  } catch (const std::exception& e) {  // DatabaseError, or the system's
    fail(std::string("the database server (\"database\": {\"start\": true}) cannot run: ") +
         e.what());
    return false;
  }
  config_.database.conninfo = database_server_->conninfo();
  report("PostgreSQL on 127.0.0.1:" + std::to_string(database_server_->port()) +
         (config_.database.cpus.empty() ? std::string()
                                        : " (CPUs " + cpu_list_text(config_.database.cpus) + ")"));
  return true;
}

bool Engine::ensure_broker() {
  if (!config_.broker.start || broker_server_) return true;
  report("starting a throw-away Redis server");
  try {
    broker_server_ = broker::RedisServer::start(config_.broker.cpus);
  } catch (const std::exception& e) {  // BrokerError, or the system's
    fail(std::string("the message broker (\"broker\": {\"start\": true}) cannot run: ") + e.what());
    return false;
  }
  config_.broker.address = broker_server_->address();
  report("Redis on " + config_.broker.address +
         (config_.broker.cpus.empty() ? std::string()
                                      : " (CPUs " + cpu_list_text(config_.broker.cpus) + ")"));
  return true;
}

std::vector<pid_t> Engine::cpu_roots() const {
  std::vector<pid_t> roots = {::getpid()};
  // Read per call: the postmaster is the same for the whole run, but a
  // file read twice per experiment costs nothing.
  if (database_server_) {
    if (const pid_t postmaster = database_server_->pid(); postmaster > 0)
      roots.push_back(postmaster);
  }
  return roots;
}

std::vector<std::string> sut_samplers(const std::vector<std::string>& configured,
                                      const std::vector<const ExperimentSpec*>& experiments) {
  std::vector<std::string> out = configured;
  const bool has_cpu = std::any_of(configured.begin(), configured.end(),
                                   [](const std::string& s) { return s == "cpu" || s == "all"; });
  const bool needs_cpu =
      std::any_of(experiments.begin(), experiments.end(), [](const ExperimentSpec* e) {
        return std::find(e->probes.begin(), e->probes.end(), "cpu") != e->probes.end();
      });
  if (needs_cpu && !has_cpu) out.push_back("cpu");
  return out;
}

std::vector<std::string> sampler_settings(const EnvironmentConfig& config,
                                          const std::vector<const ExperimentSpec*>& experiments) {
  const std::vector<std::string> samplers = sut_samplers(config.samplers, experiments);
  if (samplers.empty()) return {};
  std::string list;
  for (const auto& s : samplers) list += (list.empty() ? "" : ",") + s;
  return {"samplers=" + list, "sampler_period_ms=" + std::to_string(config.sampler_period_ms)};
}

bool Engine::run_all(const std::vector<SeriesPlan>& plans) {
  expect_total(plans);
  for (const auto& p : plans)
    if (!run(p)) return false;
  return true;
}

void Engine::finish() {
  finished_ = true;
  end_ns_ = load::epoch_ns();
  write_run_json();
}

}  // namespace sonde::diagnose::engine
