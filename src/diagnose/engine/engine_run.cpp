// Running one series (Engine::run): its segments (consecutive phases that
// share one SUT process), the SUT's command line and start, load driven
// while the SUT is watched, and the measurement of one experiment (the
// probes switched for its stable phase, the samplers outside the SUT, CPU
// accounting, the requests of the stable phase).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <system_error>
#include <thread>

#include "diagnose/broker/redis_sampler.hpp"
#include "diagnose/database/postgres_sampler.hpp"
#include "diagnose/engine/cpu_accounting.hpp"
#include "diagnose/engine/engine.hpp"
#include "diagnose/engine/sut.hpp"
#include "diagnose/load/driver.hpp"

namespace sonde::diagnose::engine {
namespace {

namespace fs = std::filesystem;

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

// Segments of a series: consecutive phases that share one SUT process.
// A series with unmeasured load phases (the Ramp's) depends on the state
// they build up, so it always runs on one SUT.
std::vector<std::vector<std::size_t>> segments_of(const SeriesPlan& plan, bool restart_per_series) {
  const bool has_load_phases =
      std::any_of(plan.phases.begin(), plan.phases.end(),
                  [](const auto& p) { return std::holds_alternative<LoadPhase>(p); });
  const bool one_sut = restart_per_series || has_load_phases;
  std::vector<std::vector<std::size_t>> segments;
  for (std::size_t i = 0; i < plan.phases.size(); ++i) {
    if (segments.empty() || !one_sut) segments.emplace_back();
    segments.back().push_back(i);
  }
  return segments;
}

// The samplers outside the SUT (database server, message broker) that run
// during one experiment's stable phase.
class OutsideSamplers {
 public:
  void start(const EnvironmentConfig& config) {
    if (config.database.kind == "postgresql" && config.database.sample) {
      database_ = std::make_unique<database::PostgresSampler>(config.database.conninfo,
                                                              config.database.sample_interval_ms);
      database_->start();
    }
    if (config.broker.kind == "redis" && config.broker.sample) {
      broker_ = std::make_unique<broker::RedisSampler>(
          broker::RedisAddress::parse(config.broker.address), config.broker.queues,
          config.broker.sample_interval_ms);
      broker_->start();
    }
  }
  void stop() {
    if (database_) database_->stop();
    if (broker_) broker_->stop();
  }
  // Stops them (also when the stable phase never ended: the SUT died),
  // writes samples.csv and notes each in the experiment's result.
  void record(const EnvironmentConfig& config, ExperimentResult& r,
              const std::function<void(const std::string&)>& report) {
    stop();
    if (database_) {
      database::write_samples_csv((r.dir / "samples.csv").string(), "postgresql",
                                  database_->samples());
      r.samplers["postgresql"] = {
          {"status", database_->error().empty() ? "ok" : "failed"},
          {"reason", database_->error()},
          {"samples", database_->samples().size()},
          {"cpu", database_->error().empty() && database_->cpu_error().empty()},
          {"cpus", database_->cpus()},
          {"cpu_reason", database_->cpu_error()}};
      if (!database_->error().empty()) report("database sampler: " + database_->error());
    }
    if (broker_) {
      database::write_samples_csv((r.dir / "samples.csv").string(), "redis", broker_->samples(),
                                  /*append=*/database_ != nullptr);
      r.samplers["redis"] = {{"status", broker_->error().empty() ? "ok" : "failed"},
                             {"reason", broker_->error()},
                             {"samples", broker_->samples().size()},
                             {"queues", config.broker.queues}};
      if (!broker_->error().empty()) report("broker sampler: " + broker_->error());
    }
  }

 private:
  std::unique_ptr<database::PostgresSampler> database_;
  std::unique_ptr<broker::RedisSampler> broker_;
};

}  // namespace

// One SUT process and what the experiments it serves share.
struct Engine::RunningSut {
  std::unique_ptr<SystemUnderTest> process;
  std::string name;  // the program, not the `sonde run` wrapper around it
  int port = 0;
  fs::path owner_dir;  // the first new experiment's: the SUT's log goes there
  fs::path patterns_file;
  fs::path probes_file;
  std::vector<fs::path> sharers;  // experiments of this SUT other than the owner
  std::atomic<bool> stop_load{false};
  std::string died;  // set when it exited during an experiment
  bool warmed = false;
};

bool Engine::run(const SeriesPlan& plan) {
  if (!failed() && cancel_) fail("cancelled");
  if (failed()) return false;
  if (!ensure_database() || !ensure_broker()) return false;
  if (total_s_ == 0) expect_total({plan});
  for (const auto& segment : segments_of(plan, config_.sut.restart == "per_series"))
    if (!run_segment(plan, segment)) return false;
  return true;
}

bool Engine::run_segment(const SeriesPlan& plan, const std::vector<std::size_t>& segment) {
  std::vector<const ExperimentSpec*> todo;
  for (std::size_t i : segment)
    if (const auto* e = std::get_if<ExperimentSpec>(&plan.phases[i]); e && !results_.count(e->id))
      todo.push_back(e);
  if (todo.empty()) {
    for (std::size_t i : segment)
      if (const auto* e = std::get_if<ExperimentSpec>(&plan.phases[i])) report(e->id + ": reused");
    return true;
  }
  RunningSut sut;
  sut.owner_dir = out_ / "experiments" / todo.front()->id;
  const fs::path control = out_ / "control" / todo.front()->id;
  fs::create_directories(sut.owner_dir / "log");
  fs::create_directories(control);
  sut.patterns_file = control / "patterns";
  sut.probes_file = control / "probes";
  switch_probes(sut.patterns_file, sut.probes_file, {});
  sut.port = config_.sut.port > 0 ? config_.sut.port : free_loopback_port();
  sut.name =
      config_.sut.command.empty() ? "?" : fs::path(config_.sut.command.front()).filename().string();
  if (!start_sut(sut, todo)) return false;

  bool ok = true;
  for (std::size_t i : segment) {
    if (!ok) break;
    const auto& d = config_.durations;
    if (!sut.warmed && d.warm_up_s > 0) {
      report("warm-up: 1 user for " + seconds_text(d.warm_up_s));
      drive(sut, 1, 0, d.warm_up_s, 0, false, {}, {});
      done_s_ += d.warm_up_s;
    }
    sut.warmed = true;
    if (const auto* phase = std::get_if<LoadPhase>(&plan.phases[i])) {
      report(plan.series + ": load phase, " + std::to_string(phase->users) + " users for " +
             seconds_text(phase->duration_s));
      drive(sut, phase->users, d.ramp_up_s, phase->duration_s, 0, false, {}, {});
      done_s_ += phase->duration_s;
    } else {
      const ExperimentSpec& spec = std::get<ExperimentSpec>(plan.phases[i]);
      if (results_.count(spec.id)) continue;
      if (!measure(sut, spec)) ok = false;
    }
    if (cancel_ && ok) ok = false, sut.died = sut.died.empty() ? "cancelled" : sut.died;
  }
  const std::string ended = sut.process->stop(config_.sut.stop_timeout_s);
  report("system under test " + ended);
  for (const auto& dir : sut.sharers) share_log(sut.owner_dir / "log", dir / "log");
  if (!ok) {
    std::string reason = !sut.died.empty() ? sut.died : cancel_ ? "cancelled" : "experiment failed";
    for (const auto& [id, r] : results_)
      if (!r.complete && !r.reason.empty()) reason = r.reason;
    if (cancel_) reason = "cancelled";
    fail(reason);
    return false;
  }
  return true;
}

std::vector<std::string> Engine::sut_command(const RunningSut& sut,
                                             const std::vector<const ExperimentSpec*>& todo) const {
  std::vector<std::string> argv;
  if (config_.sut.monitor) {
    argv = {config_.sut.sonde.empty() ? own_executable() : config_.sut.sonde,
            "run",
            "--out",
            (sut.owner_dir / "log").string(),
            "--set",
            "patterns_file=" + sut.patterns_file.string(),
            "--set",
            "patterns_reload_ms=" + std::to_string(config_.sut.reload_ms)};
    if (config_.sut.probe_control == "probes_file") {
      argv.push_back("--set");
      argv.push_back("probes_file=" + sut.probes_file.string());
    }
    for (const std::string& setting : sampler_settings(config_, todo)) {
      argv.push_back("--set");
      argv.push_back(setting);
    }
    for (const auto& [key, value] : config_.sut.monitor_settings) {
      argv.push_back("--set");
      argv.push_back(key + "=" + value);
    }
    argv.push_back("--");
  }
  for (std::string arg : config_.sut.command) {
    for (std::size_t at; (at = arg.find("{port}")) != std::string::npos;)
      arg.replace(at, 6, std::to_string(sut.port));
    for (std::size_t at; (at = arg.find("{database}")) != std::string::npos;)
      arg.replace(at, 10, config_.database.conninfo);
    for (std::size_t at; (at = arg.find("{broker}")) != std::string::npos;)
      arg.replace(at, 8, config_.broker.address);
    argv.push_back(arg);
  }
  return argv;
}

bool Engine::start_sut(RunningSut& sut, const std::vector<const ExperimentSpec*>& todo) {
  report("starting the system under test for " + todo.front()->id + " on port " +
         std::to_string(sut.port));
  const fs::path output_file = sut.owner_dir / "sut-output.txt";
  try {
    // A port the engine chose can be taken by another process before the
    // SUT binds it (port_owner.hpp); the SUT then starts again on another
    // one, its first log removed (nothing was measured yet). A port the
    // config names is the user's to free.
    constexpr int kPortAttempts = 3;
    for (int attempt = 1;; ++attempt) {
      sut.process = std::make_unique<SystemUnderTest>(sut_command(sut, todo), output_file.string(),
                                                      config_.sut.cpus);
      try {
        sut.process->wait_ready(config_.sut.host, sut.port, config_.sut.ready_timeout_s,
                                config_.sut.stop_timeout_s, &cancel_);
        break;
      } catch (const PortTakenError& e) {
        if (config_.sut.port > 0 || attempt == kPortAttempts) throw;
        sut.process.reset();
        std::error_code ignored;
        for (const auto& entry : fs::directory_iterator(sut.owner_dir / "log", ignored))
          fs::remove_all(entry.path(), ignored);
        const int next = free_loopback_port();
        std::ofstream(output_file, std::ios::app)
            << "sonde diagnose: " << e.what() << "; starting again on port " << next << "\n";
        report(std::string(e.what()) + "; starting the system under test again on port " +
               std::to_string(next));
        sut.port = next;
      }
    }
    // libsonde refuses a bad setting by running the program unmonitored;
    // experiments without data must not pass for measured ones.
    const std::string output = sut.process->output_tail(8000);
    const auto disabled = output.find("sonde: monitoring disabled");
    if (config_.sut.monitor && disabled != std::string::npos) {
      sut.process->stop(config_.sut.stop_timeout_s);
      throw SutError("the system under test runs unmonitored: " +
                     output.substr(disabled, output.find('\n', disabled) - disabled) +
                     (config_.sut.probe_control == "probes_file"
                          ? " (a libsonde without probes_file needs \"probe_control\": \"none\")"
                          : ""));
    }
  } catch (const SutError& e) {
    ExperimentResult r;
    r.spec = *todo.front();
    r.dir = sut.owner_dir;
    r.reason = e.what();
    results_[r.spec.id] = r;
    order_.push_back(r.spec.id);
    write_experiment_json(r);
    fail(e.what());
    return false;
  }
  return true;
}

load::LoadResult Engine::drive(RunningSut& sut, int users, double ramp_up, double stable,
                               double cool_down, bool settle, load::LoadOptions::Callback begin,
                               load::LoadOptions::Callback end) {
  load::LoadOptions o;
  if (settle) {  // wait for stability before the stable phase (measured experiments)
    o.stability_max_s = config_.durations.stability_max_s;
    o.stability_window_s = config_.durations.stability_window_s;
    o.stability_tolerance = config_.durations.stability_tolerance;
  }
  o.host = config_.sut.host;
  o.port = sut.port;
  o.users = users;
  o.arrival_rate = config_.arrival_rate_per_user * users;
  o.ramp_up_s = ramp_up;
  o.duration_s = stable;
  o.cool_down_s = cool_down;
  o.cancel = &sut.stop_load;
  o.seed = static_cast<std::uint64_t>(order_.size() + 1);
  o.on_stable_begin = std::move(begin);
  o.on_stable_end = std::move(end);
  // Watches the SUT and the cancel flag while the load runs.
  std::atomic<bool> load_done{false};
  std::thread watcher([&] {
    while (!load_done) {
      if (cancel_) sut.stop_load = true;
      if (auto how = sut.process->exited()) {
        sut.died = "the system under test (" + sut.name + ") " +
                   (config_.sut.monitor ? killed_under_sonde_run(*how) : *how) +
                   " during the experiment; the run stops here; its output:\n" +
                   sut.process->output_tail();
        sut.stop_load = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  load::LoadResult result = load::run_load(profile_, o);
  load_done = true;
  watcher.join();
  return result;
}

bool Engine::measure(RunningSut& sut, const ExperimentSpec& spec) {
  const auto& d = config_.durations;
  const double stable = spec.stable_s > 0 ? spec.stable_s : d.stable_s;
  ExperimentResult r;
  r.spec = spec;
  r.dir = out_ / "experiments" / spec.id;
  fs::create_directories(r.dir);
  if (r.dir != sut.owner_dir) sut.sharers.push_back(r.dir);
  const double left = std::max(0.0, total_s_ - done_s_);
  report("[" + std::to_string(order_.size() + 1) + "] " + spec.id + ": " +
         std::to_string(spec.users) + " users, ramp-up " + seconds_text(d.ramp_up_s) + ", stable " +
         seconds_text(stable) + "; elapsed " +
         seconds_text(
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()) +
         (total_is_bound_ ? ", ETA at most " : ", ETA ") + seconds_text(left));
  OutsideSamplers samplers;
  CpuSnapshot cpu_before, cpu_after;
  bool cpu_began = false, cpu_ended = false;  // the stable phase began / ended
  const auto result = drive(
      sut, spec.users, d.ramp_up_s, stable, d.cool_down_s, true,
      [&](std::int64_t) {
        switch_probes(sut.patterns_file, sut.probes_file, spec.probes);
        samplers.start(config_);
        // Last: reading /proc must not delay the probes.
        cpu_before = take_cpu_snapshot(cpu_roots());
        cpu_began = true;
      },
      [&](std::int64_t) {
        cpu_after = take_cpu_snapshot(cpu_roots());
        cpu_ended = true;
        switch_probes(sut.patterns_file, sut.probes_file, {});
        samplers.stop();
      });
  samplers.record(config_, r, [this](const std::string& line) { report(line); });
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
             std::to_string(std::lround(d.stability_tolerance * 100)) + "%); measuring anyway");
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
  if (!sut.died.empty()) {
    r.reason = sut.died;
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
  write_run_json();
  return r.complete;
}

}  // namespace sonde::diagnose::engine
