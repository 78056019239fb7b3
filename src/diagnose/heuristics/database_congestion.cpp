// Database Congestion (thesis H7, Alg. 16-17, queueing-theory strategy):
// the database is overloaded at the loads where requirements are violated.
// Two rules, either detects:
//  1. CPU: the database's CPU utilization reaches the utilization at which
//     an M/M/c queue's response time grows by `saturation_rt_factor` over
//     its service demand (inverse Erlang C, c = CPU cores; the thesis'
//     utilizationForRTFactor with DynamicSpotter's f_R role).
//  2. Locks: the waiting time per lock wait grows significantly into every
//     violating load (Welch t-test between neighbouring loads, s = |I|).
//
// What "database CPU" is here: an embedded database (SQLite) runs in the
// system under test, so the CPU sampler sees application and database
// together. The database's part is estimated as the time spent in database
// calls per core-second, capped by the measured CPU utilization:
// U_db = min(U_cpu, sum(DatabaseCall.duration) / (stable phase * cores)).
// A CPU-bound application with quick queries (thesis TC10) stays below;
// statements that wait for locks count as busy time but are capped by the
// idle CPU.
//
// What a "lock wait" is here: statements whose only work is taking a
// database lock (BEGIN IMMEDIATE / BEGIN EXCLUSIVE, LOCK TABLE); their
// duration is the wait for that lock, one sample per lock wait. (The
// thesis reads cumulative lock counters from the database server; no
// server-side sampler exists yet.)
#include <algorithm>
#include <cctype>
#include <set>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/heuristics/growth_with_load.hpp"
#include "diagnose/heuristics/sql_shape.hpp"
#include "diagnose/stats/descriptive.hpp"
#include "diagnose/stats/erlang.hpp"

namespace sonde::diagnose::heuristics {
namespace {

constexpr const char* kDatabaseCall = "sonde.record.DatabaseCall";

bool is_lock_statement(const std::string& shape) {
  std::string upper;
  for (char c : shape) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* prefix : {"BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "LOCK TABLE", "LOCK "}) {
    if (upper.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

struct StepData {
  double cpu = 0;      // measured utilization, 0..1
  double db_busy = 0;  // database call time per core-second
  double db_cpu = 0;   // min(cpu, db_busy)
  size_t calls = 0;
  std::map<std::string, std::vector<double>> lock_waits_ms;  // lock statement shape -> waits
};

class DatabaseCongestion : public Heuristic {
 public:
  std::string name() const override { return "database_congestion"; }
  std::string title() const override { return "Database Congestion"; }
  std::string description() const override {
    return "The database is overloaded under load: its CPU is saturated, or requests wait "
           "longer and longer for database locks. Look at the statements below it.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"scaling", "scaling", 5, {"response_time", "database", "cpu"}}};
  }
  std::map<std::string, double> defaults() const override {
    // f_R: the thesis gives none; 2 (response time doubled by queueing) is
    // the saturation Database OLB uses, so the two never disagree on it.
    return {{"saturation_rt_factor", 2}, {"min_relative_increase", 0}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    if (steps.size() < 2) return not_evaluated("needs a scaling series with >= 2 complete steps");
    std::vector<StepData> data(steps.size());
    int sampled_cores = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      const Experiment& e = *steps[s];
      if (!e.has_probe("database"))
        return not_evaluated("experiment '" + e.id + "' ran without the database probe");
      std::string error;
      int seen = 0;
      if (!cpu_utilization(e, &data[s].cpu, &seen, &error)) return not_evaluated(error);
      sampled_cores = std::max(sampled_cores, seen);
      const LogRecords& recs = log_records(e, kDatabaseCall);
      if (!recs.error.empty()) return not_evaluated(recs.error);
      double busy_ns = 0;
      for (const LogRecord& r : recs.records) {
        const double d = r.number("duration", -1);
        if (d < 0) continue;  // unknown duration
        busy_ns += d;
        const std::string shape = sql_shape(r.text("sqlStatement"));
        if (is_lock_statement(shape)) data[s].lock_waits_ms[shape].push_back(d / 1e6);
      }
      data[s].calls = recs.records.size();
      data[s].db_busy = busy_ns;  // divided by the capacity below, once cores are known
    }
    const int cores = servers_for(ctx, sampled_cores);
    for (size_t s = 0; s < steps.size(); ++s) {
      const double capacity_ns = steps[s]->duration_s() * 1e9 * cores;
      data[s].db_busy = capacity_ns > 0 ? data[s].db_busy / capacity_ns : 0;
      data[s].db_cpu = std::min(data[s].cpu, data[s].db_busy);
    }
    const double factor = ctx.params.at("saturation_rt_factor");
    if (!(factor > 1)) return not_evaluated("parameter saturation_rt_factor must be > 1");
    const double limit = stats::utilization_for_rt_factor(factor, cores);
    const std::vector<size_t> critical = violating_step_indexes(ctx, steps);

    NodeResult r;
    nlohmann::json cpu_chart = nlohmann::json::array();
    for (size_t s = 0; s < steps.size(); ++s) {
      cpu_chart.push_back({{"users", steps[s]->users},
                           {"cpu", data[s].cpu},
                           {"database_busy", data[s].db_busy},
                           {"database_cpu", data[s].db_cpu},
                           {"threshold", limit}});
    }
    r.charts["database_cpu"] = cpu_chart;

    // Rule 1: CPU at any violating load.
    std::vector<int> cpu_users;
    for (size_t s : critical) {
      const bool over = data[s].db_cpu >= limit;
      if (over) cpu_users.push_back(steps[s]->users);
      Evidence ev;
      ev.location = "database CPU";
      ev.test = "estimated database CPU >= inverse Erlang C threshold (response time x" +
                fmt(factor) + ", " + std::to_string(cores) + " cores)";
      ev.effect_size = data[s].db_cpu;
      ev.effect = "estimated database CPU utilization (0..1)";
      ev.data = describe_sample(*steps[s], data[s].calls) + " database calls, CPU records";
      ev.detail = "At " + std::to_string(steps[s]->users) + " users the database used about " +
                  fmt(data[s].db_cpu * 100) + "% of the CPU (measured CPU " +
                  fmt(data[s].cpu * 100) + "%, database calls " + fmt(data[s].db_busy * 100) +
                  "% of the core time); saturation starts at " + fmt(limit * 100) + "%" +
                  (over ? ": saturated" : "");
      ev.values = {{"users", steps[s]->users},
                   {"cpu", data[s].cpu},
                   {"database_busy", data[s].db_busy},
                   {"database_cpu", data[s].db_cpu},
                   {"threshold", limit},
                   {"cores", cores},
                   {"saturated", over}};
      if (over) r.evidence.push_back(std::move(ev));
    }

    // Rule 2: waiting time per lock wait grows into every violating load.
    std::set<std::string> locks;
    for (const StepData& d : data)
      for (const auto& [lock, waits] : d.lock_waits_ms) locks.insert(lock);
    std::vector<std::string> grown;
    nlohmann::json lock_chart = nlohmann::json::array();
    for (const std::string& lock : locks) {
      static const std::vector<double> none;
      auto waits = [&](size_t s) -> const std::vector<double>& {
        auto it = data[s].lock_waits_ms.find(lock);
        return it == data[s].lock_waits_ms.end() ? none : it->second;
      };
      int increased = 0;
      std::vector<Evidence> evs;
      for (size_t s : critical) {
        const Increase inc = test_increase(waits(s - 1), waits(s), ctx.settings.alpha,
                                           ctx.params.at("min_relative_increase"));
        increased += inc.significant;
        Evidence ev = increase_evidence(
            inc, "lock " + lock,
            std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) +
                " users, lock waits n=" + std::to_string(waits(s - 1).size()) + "/" +
                std::to_string(waits(s).size()));
        ev.detail = "Waiting for the lock (" + lock + ") took " + fmt(inc.test.mean_a) + " ms -> " +
                    fmt(inc.test.mean_b) + " ms per wait from " +
                    std::to_string(steps[s - 1]->users) + " to " + std::to_string(steps[s]->users) +
                    " users";
        evs.push_back(std::move(ev));
      }
      nlohmann::json points = nlohmann::json::array();
      for (size_t s = 0; s < steps.size(); ++s)
        if (!waits(s).empty())
          points.push_back({steps[s]->users, stats::mean(waits(s)), waits(s).size()});
      const bool found = !critical.empty() && increased == static_cast<int>(critical.size());
      lock_chart.push_back({{"key", lock}, {"points", points}, {"found", found}});
      if (!found) continue;
      grown.push_back(lock);
      for (Evidence& ev : evs) r.evidence.push_back(std::move(ev));
    }
    r.charts["growth"] = lock_chart;

    shared = {{"cpu_saturated_users", cpu_users}, {"growing_locks", grown}, {"cores", cores}};
    const bool found = !cpu_users.empty() || !grown.empty();
    r.status = found ? Status::kDetected : Status::kNotDetected;
    if (!cpu_users.empty() && !grown.empty()) {
      r.reason = "the database CPU is saturated and lock waits grow with load";
    } else if (!cpu_users.empty()) {
      r.reason = "the database CPU is saturated at " + std::to_string(cpu_users.size()) +
                 " violating load(s)";
    } else if (!grown.empty()) {
      r.reason = std::to_string(grown.size()) + " database lock(s) are waited for longer at " +
                 "every violating load";
    } else {
      double peak = 0;
      for (size_t s : critical) peak = std::max(peak, data[s].db_cpu);
      r.reason = "database CPU at most " + fmt(peak * 100) + "% (saturation " + fmt(limit * 100) +
                 "%) and no lock wait grows at every violating load" +
                 (locks.empty() ? " (no lock-taking statements seen)" : "");
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_database_congestion() {
  return std::make_unique<DatabaseCongestion>();
}

}  // namespace sonde::diagnose::heuristics
