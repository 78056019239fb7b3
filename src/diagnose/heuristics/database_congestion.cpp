// Database Congestion (thesis H7, Alg. 16-17, queueing-theory strategy):
// the database is overloaded at the loads where requirements are violated.
// Two rules, either detects:
//  1. CPU: the database's CPU utilization reaches the utilization at which
//     an M/M/c queue's response time grows by `saturation_rt_factor` over
//     its service demand (inverse Erlang C, c = CPU cores; the thesis'
//     utilizationForRTFactor, Alg. 17, whose f_R it leaves open:
//     DynamicSpotter's code uses 3 and 0.9 of the utilization, sonde 2).
//  2. Locks: the waiting time per lock wait grows significantly into every
//     violating load (Welch t-test between neighbouring loads, s = |I|),
//     and the step's waits for that lock add up to at least
//     min_lock_wait_share of the step's summed response time.
//
// What "database CPU" is here:
//  - A database server with a sampler ("database" in the config, e.g.
//    PostgreSQL): the CPU time of the server's processes, measured, per
//    core-second of the stable phase (the thesis' DB-server CPU sampler).
//  - An embedded database (SQLite) runs in the system under test, so the
//    CPU sampler sees application and database together. The database's
//    part is estimated as the time spent in database calls per
//    core-second, capped by the measured CPU utilization:
//    U_db = min(U_cpu, sum(DatabaseCall.duration) / (stable phase * cores)).
//    A CPU-bound application with quick queries (thesis TC10) stays below;
//    statements that wait for locks count as busy time but are capped by
//    the idle CPU.
//
// Embedded databases (sonde's rule, not the thesis'): with no database
// server sampled and no call going to a server (SQLite, or calls the
// program reports itself), nothing measures the database apart from the
// application: its CPU is the application's, and SQLite's own lock waits
// happen inside its calls. There the database branch is judged from the
// calls' own time (database_calls.hpp), per violating service at each
// violating load:
//  3. Call time: the service's requests spend >= min_call_share of their
//     response time in database calls at every load where it violates
//     (a material part of the time goes to the database), or their
//     database time per request rises significantly (Welch t-test against
//     the lowest load) and that rise is >= min_call_share of the rise of
//     their response time (a material part of what load added is database
//     time). The evidence says it was judged from in-process call time.
//
// What a "lock wait" is here, either of:
//  - statements whose only work is taking a database lock (BEGIN IMMEDIATE
//    / BEGIN EXCLUSIVE, LOCK TABLE): their duration is the wait for that
//    lock, one value per lock wait;
//  - with a database sampler: the backends waiting for each locked object
//    at every sampling instant (pg_locks). The thesis reads cumulative lock
//    counters from the server; PostgreSQL keeps none, and the mean number
//    of waiters is the total waiting time per second (Little's law).
//
// Over 500 lines: the two rules share the per-step data (statements,
// lock waits, CPU) they are computed from, and one evidence table.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/heuristics/database_calls.hpp"
#include "diagnose/heuristics/growth_with_load.hpp"
#include "diagnose/heuristics/sql_shape.hpp"
#include "stats/descriptive.hpp"
#include "stats/erlang.hpp"

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
  double db_cpu = 0;   // the server's measured CPU, else min(cpu, db_busy)
  bool db_cpu_measured = false;
  size_t calls = 0;
  std::map<std::string, std::vector<double>> lock_waits_ms;  // lock statement shape -> waits
  DatabaseServerSamples server;
};

// Rule 3's data for one service at one step: its attributed requests'
// response and database times.
struct ServiceCallTime {
  std::vector<double> response_ms;
  std::vector<double> database_ms;
  double share() const {
    double rt = 0, db = 0;
    for (double v : response_ms) rt += v;
    for (double v : database_ms) db += v;
    return rt > 0 ? db / rt : 0;
  }
};

// Per service, from the attributed requests; when too few requests found
// their trace, every request pooled under "" (all services) with the step's
// whole database time, and no per-request samples.
std::map<std::string, ServiceCallTime> call_time_per_service(const Experiment& e,
                                                             double min_attributed,
                                                             bool* attributed) {
  std::map<std::string, ServiceCallTime> out;
  const DatabaseCallTime& t = database_call_time(e);
  *attributed = t.error.empty() && t.total_requests > 0 &&
                static_cast<double>(t.requests.size()) >=
                    min_attributed * static_cast<double>(t.total_requests);
  if (*attributed) {
    for (const RequestDatabaseTime& r : t.requests) {
      ServiceCallTime& s = out[r.service];
      s.response_ms.push_back(r.response_ms);
      s.database_ms.push_back(r.database_ms);
    }
    return out;
  }
  ServiceCallTime& all = out[""];
  all.response_ms = e.response_times();
  all.database_ms = {t.all_calls_ms};
  return out;
}

struct CallTimeResult {
  std::vector<Evidence> evidence;
  nlohmann::json chart = nlohmann::json::array();
  std::vector<std::string> services;  // found ("" = all services, pooled)
  std::string error;
};

double mean_of(const std::vector<double>& v) { return v.empty() ? 0 : stats::mean(v); }

// Rule 3 (header): per violating service, at every load where it violates,
// the database calls take >= min_call_share of its response time, or their
// time per request rose significantly from the lowest load by >=
// min_call_share of the rise of the response time.
CallTimeResult call_time_rule(const Context& ctx, const std::vector<const Experiment*>& steps,
                              const std::vector<size_t>& critical) {
  CallTimeResult out;
  const double min_share = ctx.params.at("min_call_share");
  const double min_attributed = ctx.params.at("min_attributed");
  for (const Experiment* e : steps) {
    const DatabaseCallTime& t = database_call_time(*e);
    if (!t.error.empty()) {
      out.error = t.error;
      return out;
    }
  }
  // Per service when every step's requests found their traces, else all
  // services pooled (then without per-request samples: no growth test).
  bool attributed = true;
  std::vector<std::map<std::string, ServiceCallTime>> per(steps.size());
  for (size_t s = 0; s < steps.size() && attributed; ++s) {
    per[s] = call_time_per_service(*steps[s], min_attributed, &attributed);
  }
  if (!attributed) {
    for (size_t s = 0; s < steps.size(); ++s) {
      bool ignored = false;
      per[s] = call_time_per_service(*steps[s], INFINITY, &ignored);
    }
  }
  // The services to judge and the loads where each violates.
  std::map<std::string, std::vector<size_t>> loads;
  for (size_t s : critical) {
    const std::vector<std::string> violating = violating_services(*steps[s], ctx.settings);
    if (!attributed && !violating.empty()) loads[""].push_back(s);
    if (!attributed) continue;
    for (const std::string& v : violating) loads[v].push_back(s);
  }
  for (const auto& [service_key, at] : loads) {
    // A named copy: clang 14 does not let lambdas capture structured bindings.
    const std::string& service = service_key;
    const std::string name = service.empty() ? "all services" : service;
    static const ServiceCallTime none;
    auto data = [&](size_t s) -> const ServiceCallTime& {
      auto it = per[s].find(service);
      return it == per[s].end() ? none : it->second;
    };
    const ServiceCallTime& base = data(0);
    const double db_base =
        attributed ? mean_of(base.database_ms)
                   : mean_of(base.database_ms) / std::max<double>(1, base.response_ms.size());
    const double rt_base = mean_of(base.response_ms);
    bool found = true;
    std::vector<Evidence> evs;
    nlohmann::json points = nlohmann::json::array();
    for (size_t s = 0; s < steps.size(); ++s) {
      if (!data(s).response_ms.empty())
        points.push_back({{"users", steps[s]->users}, {"share", data(s).share()}});
    }
    for (size_t s : at) {
      const ServiceCallTime& d = data(s);
      const double share = d.share();
      const double rt = mean_of(d.response_ms);
      const double db = attributed
                            ? mean_of(d.database_ms)
                            : mean_of(d.database_ms) / std::max<double>(1, d.response_ms.size());
      const double growth_share = rt > rt_base ? (db - db_base) / (rt - rt_base) : 0;
      Increase inc;
      if (attributed)
        inc = test_increase(base.database_ms, d.database_ms, ctx.settings.alpha,
                            ctx.params.at("min_relative_increase"));
      const bool dominant = share >= min_share;
      const bool grows = inc.significant && growth_share >= min_share;
      found = found && !d.response_ms.empty() && (dominant || grows);
      Evidence ev;
      ev.location = name;
      ev.test =
          "in-process database call time (no database server): share of the response "
          "time >= " +
          fmt(min_share) + ", or of its rise from " + std::to_string(steps[0]->users) +
          " user(s) >= " + fmt(min_share) + " (Welch t-test, one-sided)";
      ev.p_value = attributed ? inc.test.p_greater : NAN;
      ev.effect_size = share;
      ev.effect = "share of the response time spent in database calls";
      ev.data = describe_sample(*steps[s], d.response_ms.size()) +
                (attributed ? " requests attributed to their trace"
                            : " requests; database calls not attributable to requests (is the "
                              "request handler monitored?), all services pooled, no growth test");
      ev.detail =
          "At " + std::to_string(steps[s]->users) + " users " + name + " spent " +
          fmt(share * 100) + "% of its response time in database calls (" + fmt(db) + " of " +
          fmt(rt) + " ms per request); from " + std::to_string(steps[0]->users) + " user(s) (" +
          fmt(db_base) + " of " + fmt(rt_base) + " ms) the database time " +
          (rt > rt_base ? "made up " + fmt(growth_share * 100) + "% of the response time's rise"
                        : std::string("did not rise with the response time")) +
          (dominant ? ": at least " + fmt(min_share * 100) + "% of the time"
           : grows  ? ": at least " + fmt(min_share * 100) + "% of the rise"
                    : "");
      ev.values = {{"users", steps[s]->users},
                   {"service", service},
                   {"share", share},
                   {"growth_share", growth_share},
                   {"database_ms", db},
                   {"response_ms", rt},
                   {"database_ms_lowest_load", db_base},
                   {"response_ms_lowest_load", rt_base},
                   {"growth_significant", inc.significant},
                   {"dominant", dominant},
                   {"attributed", attributed}};
      evs.push_back(std::move(ev));
    }
    for (Evidence& ev : evs) {
      ev.values["found"] = found;
      out.evidence.push_back(std::move(ev));
    }
    out.chart.push_back({{"service", name}, {"points", points}, {"found", found}});
    if (found) out.services.push_back(service);
  }
  return out;
}

// A lock's values per step and how to word them.
struct LockSeries {
  std::string label;  // "lock BEGIN IMMEDIATE", "waiters for stock"
  std::string unit;   // what one value is
  bool sampled = false;
  std::map<size_t, std::vector<double>> values;  // step -> values
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
    // min_lock_wait_share: a lock statement's waits at a violating load
    // must add up to this share of the load's summed response time (not in
    // the thesis; 36 -> 74 us per BEGIN IMMEDIATE grew significantly in
    // scenario tc18 and congested nothing). A share, not a wait in ms
    // (min_lock_wait_ms 0.5, set for tc18, until 2026-11-28): what
    // matters is how much of the requests' time the lock takes, and a
    // floor in ms means something else on a faster or slower system. 0.5:
    // the majority (until 2026-12-02 0.05, borrowed from Excessive
    // Messaging's min_wait_share, which was set for tc23; re-evaluated, no
    // stored label moves between 1/3 and 2/3).
    // min_call_share (sonde's own, for an embedded database, rule 3): a
    // material part of a violating service's response time, or of its
    // growth under load, spent in database calls. 0.2 since 2026-12-07
    // (0.5, the majority, before): the planted embedded N+1 spends about
    // half of each request in SQLite at every load (tc12e: 0.51-0.66 in
    // seven runs), on the majority's line, and the ticket office's t07
    // 0.35; the cases labelled not congested spend at most 0.068 (tc23,
    // l15), thirteen stored runs of three systems
    // (scenarios/edge_shares.py; a training observation, the docs say
    // so). 0.2 and its 0.5x and 2x (0.11, 0.33) all lie in that gap.
    // min_attributed: the share of requests that must find their trace,
    // as Expensive Database Call asks, for the per-service split to mean
    // anything.
    return {{"saturation_rt_factor", 2},
            {"min_relative_increase", 0},
            {"min_lock_wait_share", 0.5},
            {"min_call_share", 0.2},
            {"min_attributed", 0.5}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"min_attributed", {ParameterKind::kShare}},
            {"min_call_share", {ParameterKind::kShare}},
            {"min_lock_wait_share", {ParameterKind::kShare}},
            {"saturation_rt_factor", {ParameterKind::kGrowthFactor}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    if (steps.size() < 2) return not_evaluated("needs a scaling series with >= 2 complete steps");
    const double call_share = ctx.params.at("min_call_share");  // rule 3, for the reason
    std::vector<StepData> data(steps.size());
    int sampled_cores = 0;
    bool in_process = true;  // no step sampled a server or called one
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
      in_process = in_process && database_in_process(e, recs);
      data[s].db_busy = busy_ns;  // divided by the capacity below, once cores are known
      data[s].server = database_server_samples(e);
      if (!data[s].server.error.empty())
        return not_evaluated("the database sampler failed in experiment '" + e.id +
                             "': " + data[s].server.error);
    }
    // The database's servers: the cores it may run on. A sampled server
    // says so itself (e.g. pinned to its own CPUs, as on its own machine);
    // an embedded database shares the application's cores.
    int cores = servers_for(ctx, sampled_cores);
    if (ctx.settings.cores == 0) {
      for (const StepData& d : data)
        if (d.server.cpu_s >= 0 && d.server.cpus > 0) cores = d.server.cpus;
    }
    for (size_t s = 0; s < steps.size(); ++s) {
      const double capacity_ns = steps[s]->duration_s() * 1e9 * cores;
      data[s].db_busy = capacity_ns > 0 ? data[s].db_busy / capacity_ns : 0;
      data[s].db_cpu = std::min(data[s].cpu, data[s].db_busy);
      if (data[s].server.cpu_s >= 0 && capacity_ns > 0) {
        data[s].db_cpu = std::min(1.0, data[s].server.cpu_s * 1e9 / capacity_ns);
        data[s].db_cpu_measured = true;
      }
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
                           {"measured", data[s].db_cpu_measured},
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
      const bool measured = data[s].db_cpu_measured;
      const std::string what = measured ? "database server CPU" : "estimated database CPU";
      ev.test = what + " >= inverse Erlang C threshold (response time x" + fmt(factor) + ", " +
                std::to_string(cores) + " cores)";
      ev.effect_size = data[s].db_cpu;
      ev.effect = what + " utilization (0..1)";
      ev.data = describe_sample(*steps[s], data[s].calls) + " database calls, CPU records" +
                (measured ? ", " + std::to_string(data[s].server.samples) + " server samples"
                          : std::string());
      ev.detail =
          "At " + std::to_string(steps[s]->users) + " users the database " +
          (measured
               ? "server's processes used " + fmt(data[s].db_cpu * 100) +
                     "% of the CPU (measured; the whole machine " + fmt(data[s].cpu * 100) + "%)"
               : "used about " + fmt(data[s].db_cpu * 100) + "% of the CPU (measured CPU " +
                     fmt(data[s].cpu * 100) + "%, database calls " + fmt(data[s].db_busy * 100) +
                     "% of the core time)") +
          "; saturation starts at " + fmt(limit * 100) + "%" + (over ? ": saturated" : "");
      ev.values = {{"users", steps[s]->users},
                   {"cpu", data[s].cpu},
                   {"database_busy", data[s].db_busy},
                   {"database_cpu", data[s].db_cpu},
                   {"database_cpu_measured", measured},
                   {"threshold", limit},
                   {"cores", cores},
                   {"saturated", over},
                   {"found", over}};
      r.evidence.push_back(std::move(ev));
    }

    // Rule 2: the wait per lock grows into every violating load: the time
    // per lock-taking statement, or the server's waiters per lock.
    std::map<std::string, LockSeries> series;
    for (size_t s = 0; s < steps.size(); ++s) {
      for (const auto& [lock, waits] : data[s].lock_waits_ms) {
        LockSeries& l = series["statement " + lock];
        l.label = "lock " + lock;
        l.unit = "ms per wait";
        l.values[s] = waits;
      }
      for (const auto& [lock, waiters] : data[s].server.lock_waiting) {
        LockSeries& l = series["server " + lock];
        l.label = "waiters for " + lock;
        l.unit = "backends waiting";
        l.sampled = true;
        l.values[s] = waiters;
      }
    }
    std::vector<std::string> grown;
    nlohmann::json lock_chart = nlohmann::json::array();
    std::vector<double> response_ms(steps.size());  // per step, summed over its requests
    for (size_t s = 0; s < steps.size(); ++s) {
      const std::vector<double> rts = steps[s]->response_times();
      response_ms[s] = std::accumulate(rts.begin(), rts.end(), 0.0);
    }
    for (const auto& entry : series) {
      // Named, not a structured binding: clang 14 (the TSan build) cannot
      // capture those in a lambda.
      const LockSeries& lock = entry.second;
      auto values = [&](size_t s) {
        auto it = lock.values.find(s);
        if (it != lock.values.end()) return it->second;
        // A sampled step where nobody waited for this lock: zeros.
        return std::vector<double>(lock.sampled ? data[s].server.samples : 0, 0.0);
      };
      int increased = 0;
      std::vector<Evidence> evs;
      for (size_t s : critical) {
        const std::vector<double> before = values(s - 1), after = values(s);
        const Increase inc = test_increase(before, after, ctx.settings.alpha,
                                           ctx.params.at("min_relative_increase"));
        // Waits measured per statement must also take a share of the
        // requests' time that matters; a sampled waiter is a backend
        // caught waiting, long by itself.
        const double share = response_ms[s] > 0
                                 ? std::accumulate(after.begin(), after.end(), 0.0) / response_ms[s]
                                 : 0;
        const bool relevant = lock.sampled || share >= ctx.params.at("min_lock_wait_share");
        increased += inc.significant && relevant;
        Evidence ev = increase_evidence(
            inc, lock.label,
            std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) +
                " users, " + (lock.sampled ? "server samples" : "lock waits") +
                " n=" + std::to_string(before.size()) + "/" + std::to_string(after.size()));
        ev.detail = lock.sampled ? "Backends waiting for the lock on " + lock.label.substr(12) +
                                       ": " + fmt(inc.test.mean_a) + " -> " + fmt(inc.test.mean_b) +
                                       " on average from " + std::to_string(steps[s - 1]->users) +
                                       " to " + std::to_string(steps[s]->users) + " users"
                                 : "Waiting for the " + lock.label + " took " +
                                       fmt(inc.test.mean_a) + " ms -> " + fmt(inc.test.mean_b) +
                                       " ms per wait from " + std::to_string(steps[s - 1]->users) +
                                       " to " + std::to_string(steps[s]->users) + " users" + " (" +
                                       fmt(share * 100) + "% of the requests' time" +
                                       (relevant ? ")" : ", too little to matter)");
        ev.values["relevant"] = relevant;
        if (!lock.sampled) ev.values["wait_share"] = share;
        evs.push_back(std::move(ev));
      }
      nlohmann::json points = nlohmann::json::array();
      for (size_t s = 0; s < steps.size(); ++s) {
        const std::vector<double> v = values(s);
        if (!v.empty()) points.push_back({steps[s]->users, stats::mean(v), v.size()});
      }
      const bool found = !critical.empty() && increased == static_cast<int>(critical.size());
      lock_chart.push_back(
          {{"key", lock.label}, {"unit", lock.unit}, {"points", points}, {"found", found}});
      for (Evidence& ev : evs) {
        ev.values["found"] = found;
        r.evidence.push_back(std::move(ev));
      }
      if (found) grown.push_back(lock.label);
    }
    r.charts["growth"] = lock_chart;

    // Rule 3: an embedded database, judged from its calls' own time.
    std::vector<std::string> call_services;
    if (in_process) {
      const CallTimeResult calls = call_time_rule(ctx, steps, critical);
      if (!calls.error.empty()) return not_evaluated(calls.error);
      for (const Evidence& ev : calls.evidence) r.evidence.push_back(ev);
      r.charts["database_call_share"] = calls.chart;
      call_services = calls.services;
    }

    shared = {{"cpu_saturated_users", cpu_users},
              {"growing_locks", grown},
              {"cores", cores},
              {"in_process", in_process},
              {"database_call_services", call_services}};
    const bool found = !cpu_users.empty() || !grown.empty() || !call_services.empty();
    r.status = found ? Status::kDetected : Status::kNotDetected;
    // How an embedded database was judged: from its calls' time, as no
    // server exists to measure.
    const std::string how =
        in_process ? " (an in-process database: judged from the time in its calls, as there is "
                     "no database server to measure)"
                   : "";
    if (!call_services.empty()) {
      std::string names;
      for (const std::string& n : call_services)
        names += (names.empty() ? "" : ", ") + (n.empty() ? std::string("all services") : n);
      r.reason = "database calls take at least " + fmt(call_share * 100) +
                 "% of the response time of " + names + ", or of its growth, at every " +
                 "violating load" + how;
      if (!cpu_users.empty() || !grown.empty())
        r.reason += "; also " + std::string(!cpu_users.empty() ? "a saturated database CPU" : "") +
                    (!cpu_users.empty() && !grown.empty() ? " and " : "") +
                    (!grown.empty() ? "growing lock waits" : "");
    } else if (!cpu_users.empty() && !grown.empty()) {
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
                 (series.empty() ? " (no lock-taking statements or lock waiters seen)" : "") +
                 (in_process ? "; no violating service spends " + fmt(call_share * 100) +
                                   "% of its response time, or of its growth, in database "
                                   "calls at every violating load" +
                                   how
                             : "");
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_database_congestion() {
  return std::make_unique<DatabaseCongestion>();
}

}  // namespace sonde::diagnose::heuristics
