#include "diagnose/engine/engine.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "diagnose/broker/redis_sampler.hpp"
#include "diagnose/broker/redis_server.hpp"
#include "diagnose/database/postgres_sampler.hpp"
#include "diagnose/engine/cpu_accounting.hpp"
#include "diagnose/engine/cpu_list.hpp"
#include "diagnose/engine/sut.hpp"
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

std::string own_executable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("sonde") : self.string();
}

std::string seconds_text(double s) {
  char buf[32];
  if (s >= 60)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

// Hard-links (or copies) every file of `from` into `to`.
void share_log(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(from, ec)) {
    const fs::path target = to / fs::relative(entry.path(), from);
    if (entry.is_directory()) {
      fs::create_directories(target);
      continue;
    }
    std::error_code link_error;
    fs::create_hard_link(entry.path(), target, link_error);
    if (link_error) fs::copy_file(entry.path(), target, fs::copy_options::overwrite_existing);
  }
}

// Patterns are ';'-separated in the config; patterns_file takes one rule per line.
std::string patterns_lines(const std::string& patterns) {
  std::string out;
  for (char c : patterns) out += c == ';' ? '\n' : c;
  return out;
}

// `sonde run` exits with 128 + N when its program was killed by signal N:
// say what happened to the program, not to its wrapper.
std::string killed_under_sonde_run(const std::string& how) {
  const std::string prefix = "exited with status ";
  if (how.rfind(prefix, 0) != 0) return how;
  const int code = std::atoi(how.c_str() + prefix.size());
  if (code <= 128 || code > 128 + 64) return how;
  return "was killed by signal " + std::to_string(code - 128) + " (" + strsignal(code - 128) +
         "; sonde run exited with " + std::to_string(code) + ")";
}

std::atomic<Engine*> g_signal_engine{nullptr};

void on_signal(int sig) {
  if (Engine* e = g_signal_engine.load()) e->cancel_flag().store(true);
  ::signal(sig, SIG_DFL);  // a second one ends the process
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

bool Engine::run(const SeriesPlan& plan) {
  if (!failed() && cancel_) fail("cancelled");
  if (failed()) return false;
  if (!ensure_database() || !ensure_broker()) return false;
  // Segments: consecutive phases that share one SUT process.
  // A series with unmeasured load phases (the Ramp's) depends on the state
  // they build up, so it always runs on one SUT.
  const bool has_load_phases =
      std::any_of(plan.phases.begin(), plan.phases.end(),
                  [](const auto& p) { return std::holds_alternative<LoadPhase>(p); });
  const bool one_sut = config_.sut.restart == "per_series" || has_load_phases;
  std::vector<std::vector<std::size_t>> segments;
  for (std::size_t i = 0; i < plan.phases.size(); ++i) {
    if (segments.empty() || !one_sut) segments.emplace_back();
    segments.back().push_back(i);
  }
  if (total_s_ == 0) expect_total({plan});
  for (const auto& segment : segments) {
    std::vector<const ExperimentSpec*> todo;
    for (std::size_t i : segment)
      if (const auto* e = std::get_if<ExperimentSpec>(&plan.phases[i]); e && !results_.count(e->id))
        todo.push_back(e);
    if (todo.empty()) {
      for (std::size_t i : segment)
        if (const auto* e = std::get_if<ExperimentSpec>(&plan.phases[i]))
          report(e->id + ": reused");
      continue;
    }
    // The SUT's log goes to the first new experiment of the segment.
    const fs::path owner_dir = out_ / "experiments" / todo.front()->id;
    const fs::path control = out_ / "control" / todo.front()->id;
    fs::create_directories(owner_dir / "log");
    fs::create_directories(control);
    const fs::path patterns_file = control / "patterns";
    const fs::path probes_file = control / "probes";
    switch_probes(patterns_file, probes_file, {});
    const int port = config_.sut.port > 0 ? config_.sut.port : free_loopback_port();
    std::vector<std::string> argv;
    if (config_.sut.monitor) {
      argv = {config_.sut.sonde.empty() ? own_executable() : config_.sut.sonde,
              "run",
              "--out",
              (owner_dir / "log").string(),
              "--set",
              "patterns_file=" + patterns_file.string(),
              "--set",
              "patterns_reload_ms=" + std::to_string(config_.sut.reload_ms)};
      if (config_.sut.probe_control == "probes_file") {
        argv.push_back("--set");
        argv.push_back("probes_file=" + probes_file.string());
      }
      if (const std::vector<std::string> samplers = sut_samplers(config_.samplers, todo);
          !samplers.empty()) {
        std::string list;
        for (const auto& s : samplers) list += (list.empty() ? "" : ",") + s;
        argv.push_back("--set");
        argv.push_back("samplers=" + list);
      }
      for (const auto& [key, value] : config_.sut.monitor_settings) {
        argv.push_back("--set");
        argv.push_back(key + "=" + value);
      }
      argv.push_back("--");
    }
    for (std::string arg : config_.sut.command) {
      for (std::size_t at; (at = arg.find("{port}")) != std::string::npos;)
        arg.replace(at, 6, std::to_string(port));
      for (std::size_t at; (at = arg.find("{database}")) != std::string::npos;)
        arg.replace(at, 10, config_.database.conninfo);
      for (std::size_t at; (at = arg.find("{broker}")) != std::string::npos;)
        arg.replace(at, 8, config_.broker.address);
      argv.push_back(arg);
    }
    report("starting the system under test for " + todo.front()->id + " on port " +
           std::to_string(port));
    std::unique_ptr<SystemUnderTest> sut;
    try {
      sut = std::make_unique<SystemUnderTest>(argv, (owner_dir / "sut-output.txt").string(),
                                              config_.sut.cpus);
      sut->wait_ready(config_.sut.host, port, config_.sut.ready_timeout_s, &cancel_);
      // libsonde refuses a bad setting by running the program unmonitored;
      // experiments without data must not pass for measured ones.
      const std::string output = sut->output_tail(8000);
      const auto disabled = output.find("sonde: monitoring disabled");
      if (config_.sut.monitor && disabled != std::string::npos) {
        sut->stop(config_.sut.stop_timeout_s);
        throw SutError("the system under test runs unmonitored: " +
                       output.substr(disabled, output.find('\n', disabled) - disabled) +
                       (config_.sut.probe_control == "probes_file"
                            ? " (a libsonde without probes_file needs \"probe_control\": \"none\")"
                            : ""));
      }
    } catch (const SutError& e) {
      ExperimentResult r;
      r.spec = *todo.front();
      r.dir = owner_dir;
      r.reason = e.what();
      results_[r.spec.id] = r;
      order_.push_back(r.spec.id);
      write_experiment_json(r);
      fail(e.what());
      return false;
    }
    // Named in messages: the program, not the `sonde run` wrapper around it.
    const std::string sut_name = config_.sut.command.empty()
                                     ? "?"
                                     : fs::path(config_.sut.command.front()).filename().string();
    std::vector<fs::path> sharers;  // experiments of this SUT other than the owner
    std::atomic<bool> stop_load{false};
    std::string died;
    bool warmed = false;
    // `settle`: wait for stability before the stable phase (measured experiments).
    auto drive = [&](int users, double ramp_up, double stable, double cool_down, bool settle,
                     load::LoadOptions::Callback begin, load::LoadOptions::Callback end) {
      load::LoadOptions o;
      if (settle) {
        o.stability_max_s = config_.durations.stability_max_s;
        o.stability_window_s = config_.durations.stability_window_s;
        o.stability_tolerance = config_.durations.stability_tolerance;
      }
      o.host = config_.sut.host;
      o.port = port;
      o.users = users;
      o.arrival_rate = config_.arrival_rate_per_user * users;
      o.ramp_up_s = ramp_up;
      o.duration_s = stable;
      o.cool_down_s = cool_down;
      o.cancel = &stop_load;
      o.seed = static_cast<std::uint64_t>(order_.size() + 1);
      o.on_stable_begin = std::move(begin);
      o.on_stable_end = std::move(end);
      // Watches the SUT and the cancel flag while the load runs.
      std::atomic<bool> load_done{false};
      std::thread watcher([&] {
        while (!load_done) {
          if (cancel_) stop_load = true;
          if (auto how = sut->exited()) {
            died = "the system under test (" + sut_name + ") " +
                   (config_.sut.monitor ? killed_under_sonde_run(*how) : *how) +
                   " during the experiment; the run stops here; its output:\n" + sut->output_tail();
            stop_load = true;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      });
      load::LoadResult result = load::run_load(profile_, o);
      load_done = true;
      watcher.join();
      return result;
    };
    bool ok = true;
    for (std::size_t i : segment) {
      if (!ok) break;
      const auto& d = config_.durations;
      if (!warmed && d.warm_up_s > 0) {
        report("warm-up: 1 user for " + seconds_text(d.warm_up_s));
        drive(1, 0, d.warm_up_s, 0, false, {}, {});
        done_s_ += d.warm_up_s;
      }
      warmed = true;
      if (const auto* phase = std::get_if<LoadPhase>(&plan.phases[i])) {
        report(plan.series + ": load phase, " + std::to_string(phase->users) + " users for " +
               seconds_text(phase->duration_s));
        drive(phase->users, d.ramp_up_s, phase->duration_s, 0, false, {}, {});
        done_s_ += phase->duration_s;
      } else {
        const ExperimentSpec& spec = std::get<ExperimentSpec>(plan.phases[i]);
        if (results_.count(spec.id)) continue;
        const double stable = spec.stable_s > 0 ? spec.stable_s : d.stable_s;
        ExperimentResult r;
        r.spec = spec;
        r.dir = out_ / "experiments" / spec.id;
        fs::create_directories(r.dir);
        if (r.dir != owner_dir) sharers.push_back(r.dir);
        const double left = std::max(0.0, total_s_ - done_s_);
        report(
            "[" + std::to_string(order_.size() + 1) + "] " + spec.id + ": " +
            std::to_string(spec.users) + " users, ramp-up " + seconds_text(d.ramp_up_s) +
            ", stable " + seconds_text(stable) + "; elapsed " +
            seconds_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
                             .count()) +
            (total_is_bound_ ? ", ETA at most " : ", ETA ") + seconds_text(left));
        std::unique_ptr<database::PostgresSampler> sampler;
        std::unique_ptr<broker::RedisSampler> broker_sampler;
        CpuSnapshot cpu_before, cpu_after;
        bool cpu_began = false, cpu_ended = false;  // the stable phase began / ended
        const auto result = drive(
            spec.users, d.ramp_up_s, stable, d.cool_down_s, true,
            [&](std::int64_t) {
              switch_probes(patterns_file, probes_file, spec.probes);
              if (config_.database.kind == "postgresql" && config_.database.sample) {
                sampler = std::make_unique<database::PostgresSampler>(
                    config_.database.conninfo, config_.database.sample_interval_ms);
                sampler->start();
              }
              if (config_.broker.kind == "redis" && config_.broker.sample) {
                broker_sampler = std::make_unique<broker::RedisSampler>(
                    broker::RedisAddress::parse(config_.broker.address), config_.broker.queues,
                    config_.broker.sample_interval_ms);
                broker_sampler->start();
              }
              // Last: reading /proc must not delay the probes.
              cpu_before = take_cpu_snapshot(cpu_roots());
              cpu_began = true;
            },
            [&](std::int64_t) {
              cpu_after = take_cpu_snapshot(cpu_roots());
              cpu_ended = true;
              switch_probes(patterns_file, probes_file, {});
              if (sampler) sampler->stop();
              if (broker_sampler) broker_sampler->stop();
            });
        if (sampler) {
          sampler->stop();  // also when the stable phase never ended (SUT died)
          database::write_samples_csv((r.dir / "samples.csv").string(), "postgresql",
                                      sampler->samples());
          r.samplers["postgresql"] = {
              {"status", sampler->error().empty() ? "ok" : "failed"},
              {"reason", sampler->error()},
              {"samples", sampler->samples().size()},
              {"cpu", sampler->error().empty() && sampler->cpu_error().empty()},
              {"cpus", sampler->cpus()},
              {"cpu_reason", sampler->cpu_error()}};
          if (!sampler->error().empty()) report("database sampler: " + sampler->error());
        }
        if (broker_sampler) {
          broker_sampler->stop();
          database::write_samples_csv((r.dir / "samples.csv").string(), "redis",
                                      broker_sampler->samples(), /*append=*/sampler != nullptr);
          r.samplers["redis"] = {{"status", broker_sampler->error().empty() ? "ok" : "failed"},
                                 {"reason", broker_sampler->error()},
                                 {"samples", broker_sampler->samples().size()},
                                 {"queues", config_.broker.queues}};
          if (!broker_sampler->error().empty())
            report("broker sampler: " + broker_sampler->error());
        }
        if (cpu_began && cpu_ended) {
          const CpuAccount cpu = account_cpu(cpu_before, cpu_after);
          r.cpu_accounting = cpu.to_json();
          if (cpu.valid && cpu.other_share() >= kBusyMachineShare)
            report(spec.id + ": other processes used " +
                   std::to_string(std::lround(cpu.other_share() * 100)) +
                   "% of the machine's CPUs during the measurement; CPU-based verdicts may be "
                   "off (the report warns)");
        }
        done_s_ += d.ramp_up_s + stable + d.cool_down_s + d.stability_max_s;
        if (d.stability_max_s > 0) {
          r.stability = {{"waited_s", result.stability_wait_s},
                         {"reached", result.stability_reached},
                         {"note", result.stability_note}};
          if (!result.stability_note.empty())
            report(spec.id + ": not stable after " + seconds_text(d.stability_max_s) + ": " +
                   result.stability_note + " (medians of consecutive windows within " +
                   std::to_string(std::lround(d.stability_tolerance * 100)) +
                   "%); measuring anyway");
        }
        // libsonde applies the files within reload_ms; data before that is not the experiment's.
        r.start_ns = result.stable_begin_ns + 2LL * config_.sut.reload_ms * 1000000LL;
        r.end_ns = result.stable_end_ns;
        std::vector<load::RequestRecord> measured;
        for (const auto& q : result.requests)
          if (q.end_ns >= r.start_ns && q.end_ns <= r.end_ns) measured.push_back(q);
        load::write_requests_csv((r.dir / "requests.csv").string(), measured);
        r.requests = measured.size();
        r.errors = load::count_errors(measured);
        if (!died.empty()) {
          r.reason = died;
        } else if (cancel_) {
          r.reason = "cancelled";
        } else if (r.requests == 0) {
          r.reason = "no request completed in the stable phase" +
                     (result.first_error.empty() ? std::string() : ": " + result.first_error);
        } else {
          r.complete = true;
        }
        results_[spec.id] = r;
        order_.push_back(spec.id);
        write_experiment_json(r);
        if (!r.complete) ok = false;
        write_run_json();
      }
      if (cancel_ && ok) ok = false, died = died.empty() ? "cancelled" : died;
    }
    const std::string ended = sut->stop(config_.sut.stop_timeout_s);
    report("system under test " + ended);
    for (const auto& dir : sharers) share_log(owner_dir / "log", dir / "log");
    if (!ok) {
      std::string reason = !died.empty() ? died : cancel_ ? "cancelled" : "experiment failed";
      for (const auto& [id, r] : results_)
        if (!r.complete && !r.reason.empty()) reason = r.reason;
      if (cancel_) reason = "cancelled";
      fail(reason);
      return false;
    }
  }
  return true;
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
