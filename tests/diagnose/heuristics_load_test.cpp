// Traffic Jam and One Lane Bridge on synthetic experiment data: detected when the pattern is
// planted, not detected when it is absent, not_evaluated when its data is missing. Patterns are far
// from the decision boundaries, so the outcome follows from the planted parameters, not from the
// seeded noise.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/sql_shape.hpp"
#include "diagnose_test_support.hpp"
#include "format/record.hpp"
#include "stats/t_test.hpp"

namespace sonde::diagnose::test {
namespace {

TEST(TrafficJam, DetectsResponseTimeGrowingIntoViolation) {
  TempDir jam, flat_slow, missing;
  write_scaling_series(jam.path(), {100, 300, 700, 1200, 2000});
  write_scaling_series(flat_slow.path(), {1500, 1500, 1500, 1500, 1500});
  write_experiment(missing.path(), load_test_spec([](int, const std::string&) { return 100; }));
  const ExperimentData data = load_experiment_data(jam.path());
  Settings settings;
  std::map<std::string, nlohmann::json> ancestors;
  const Heuristic& h = *heuristic_registry().at("traffic_jam");
  Context ctx{data, settings, h.defaults(), ancestors};
  nlohmann::json shared = nlohmann::json::object();
  const NodeResult r = h.evaluate(ctx, shared);
  EXPECT_EQ(r.status, Status::kDetected);
  // Violating loads (P99 > 1000 ms): 37 and 50 users.
  EXPECT_EQ(shared["violating_users"], nlohmann::json({37, 50}));
  EXPECT_EQ(evaluate(flat_slow.path(), "traffic_jam").status, Status::kNotDetected);
  EXPECT_EQ(evaluate(missing.path(), "traffic_jam").status, Status::kNotEvaluated);
}

// Scenario tc12: a service that violates already with one user (an N+1
// query) and gets slower with load, though not significantly from 1 to 13
// users. The t-test chain cannot hold (it needs an increase into the
// single-user level too); the slope over the users decides.
TEST(TrafficJam, AServiceSlowAloneThatGrowsWithLoadIsJammed) {
  TempDir grows, flat_slow;
  write_scaling_series(grows.path(), {1200, 1100, 1800, 2600, 3800});
  write_scaling_series(flat_slow.path(), {1500, 1450, 1500, 1550, 1500});
  const NodeResult r = evaluate(grows.path(), "traffic_jam");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  bool slope_evidence = false;
  double growth_share = 0;
  for (const Evidence& ev : r.evidence) {
    if (ev.test.find("slope") == std::string::npos) continue;
    slope_evidence = true;
    EXPECT_NE(ev.detail.find("already with 1 user(s)"), std::string::npos) << ev.detail;
    EXPECT_GT(ev.effect_size, 40);  // ms per user: (3800 - 1200) / 49
    EXPECT_LT(ev.p_value, 0.05);
    growth_share = ev.values.at("growth_share").get<double>();
  }
  EXPECT_TRUE(slope_evidence);
  // The fitted growth is most of the fitted time at the top: well over
  // half, under one (the 1-user level is 1.2 s of 3.8).
  EXPECT_GT(growth_share, 0.5);
  EXPECT_LT(growth_share, 1.0);
  // Slow alone but flat (an external call, tc08): no jam, and the slope that
  // says so is in the evidence.
  const NodeResult flat = evaluate(flat_slow.path(), "traffic_jam");
  EXPECT_EQ(flat.status, Status::kNotDetected);
  ASSERT_FALSE(flat.evidence.empty());
  const Evidence& slope = flat.evidence.back();
  EXPECT_NE(slope.test.find("slope"), std::string::npos) << slope.test;
  EXPECT_FALSE(slope.values.at("significant").get<bool>());
  EXPECT_LT(std::abs(slope.effect_size), 5);  // ms per user (the growing one: > 40)
  EXPECT_NE(slope.detail.find("load does not explain it"), std::string::npos) << slope.detail;
  EXPECT_LT(slope.values.at("growth_share").get<double>(), 0.1);
  // Asking for more growth than the series has turns the verdict.
  EXPECT_EQ(evaluate_with(grows.path(), "traffic_jam", {{"min_growth_share", growth_share + 0.01}})
                .status,
            Status::kNotDetected);
}

// Scenario tc20: a saturated message loop; the response time rises into
// 9 users and then stays on a plateau (276 -> 263 ms), so the t-test chain
// breaks at the last step; the slope over the users still finds the jam.
// The ledger's l11 with --quick: every request waits ~42 ms for a delayed
// ACK, alone and under load; the means rise by a sliver from step to step
// (41.8 -> 42.5 -> 43.3 ms), significant because a stall varies little.
// A service that violates alone is judged by its slope and the share of
// its time the growth makes up (here 1.5 ms of 43), not by the chain,
// which has no effect-size floor.
TEST(TrafficJam, AFlatStallThatViolatesAloneIsNoJamThoughItsMeansCreepUp) {
  TempDir creep;
  write_scaling_series(creep.path(), {41.8, 42.1, 42.5, 42.9, 43.3}, {"response_time"}, 0.4);
  Settings settings;
  settings.requirement = {15, 0.9};
  const ExperimentData data = load_experiment_data(creep.path());
  const Heuristic& h = *heuristic_registry().at("traffic_jam");
  std::map<std::string, nlohmann::json> ancestors;
  nlohmann::json shared = nlohmann::json::object();
  const NodeResult r = h.evaluate({data, settings, h.defaults(), ancestors}, shared);
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  int significant_steps = 0;  // the chain would have held
  for (const Evidence& ev : r.evidence)
    if (ev.test.find("slope") == std::string::npos && ev.values.value("significant", false))
      ++significant_steps;
  EXPECT_EQ(significant_steps, 4);
}

TEST(TrafficJam, ASaturatedPlateauAtTheTopIsStillAJam) {
  TempDir plateau;
  write_scaling_series(plateau.path(), {100, 1100, 2000, 2800, 2700});
  NodeResult r = evaluate(plateau.path(), "traffic_jam");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_FALSE(r.evidence.empty());
  // Fine alone: the evidence says where it violates.
  EXPECT_NE(r.evidence.back().detail.find("violates its requirement under load"), std::string::npos)
      << r.evidence.back().detail;
  EXPECT_FALSE(r.evidence.back().values.at("violates_alone").get<bool>());
}

// The ledger's l10 on 2026-12-04 (SQLite full scan, 15 ms at P90
// required): 9.1 ms alone, over the requirement from the second step on,
// a dip at the fourth that breaks the chain, and a fitted growth under
// half of the fitted time at the top. It meets its requirement alone and
// violates it under load, growing: the thesis' Traffic Jam, whatever the
// share. The same shape starting over the requirement alone (the ticket
// office's t07 on 2026-12-07: 13.4 -> 26.6 ms, a share of 0.46) is a jam
// on top of a slow single user: judged by its share, which is material,
// and jammed too; asking for more share than it has turns only that one.
TEST(TrafficJam, AServiceFineAloneThatGrowsIntoViolationIsJammedWhateverTheShare) {
  TempDir dip, slow_alone;
  write_scaling_series(dip.path(), {9.1, 15.9, 16.9, 15.6, 21.8}, {"response_time"}, 0.5);
  write_scaling_series(slow_alone.path(), {16.1, 22.9, 23.9, 22.6, 28.8}, {"response_time"}, 0.5);
  Settings settings;
  settings.requirement = {15, 0.9};
  const Heuristic& h = *heuristic_registry().at("traffic_jam");
  std::map<std::string, nlohmann::json> ancestors;
  for (const bool alone : {false, true}) {
    const ExperimentData data = load_experiment_data(alone ? slow_alone.path() : dip.path());
    nlohmann::json shared = nlohmann::json::object();
    const NodeResult r = h.evaluate({data, settings, h.defaults(), ancestors}, shared);
    const Evidence* slope = nullptr;
    for (const Evidence& ev : r.evidence)
      if (ev.test.find("slope") != std::string::npos) slope = &ev;
    ASSERT_NE(slope, nullptr) << "the chain breaks at the dip, so the slope decides";
    EXPECT_LT(slope->p_value, 0.05);
    EXPECT_EQ(slope->values.at("violates_alone").get<bool>(), alone);
    const double share = slope->values.at("growth_share").get<double>();
    EXPECT_GT(share, 0.1) << "alone: " << alone;
    EXPECT_LT(share, 0.5) << "alone: " << alone;
    EXPECT_EQ(r.status, Status::kDetected) << r.reason;
    std::map<std::string, double> params = h.defaults();
    params["min_growth_share"] = share + 0.01;
    nlohmann::json shared_strict = nlohmann::json::object();
    const NodeResult strict = h.evaluate({data, settings, params, ancestors}, shared_strict);
    EXPECT_EQ(strict.status, alone ? Status::kNotDetected : Status::kDetected) << strict.reason;
  }
}

// CPU records: `cores` CPUs at `utilization`, ten instants 100 ms apart.
void cpu_records(format::RecordSink& sink, double utilization, int cores) {
  const format::RecordSchema* schema =
      format::find_builtin_schema("kieker.common.record.system.CPUUtilizationRecord");
  for (int t = 0; t < 10; ++t) {
    for (int c = 0; c < cores; ++c) {
      format::Record r;
      format::reset_to_defaults(r, schema);
      const std::string id = std::to_string(c);
      r.values[static_cast<size_t>(schema->field_index("timestamp"))] = kT0 + t * 100 * kMs;
      r.values[static_cast<size_t>(schema->field_index("hostname"))] = std::string_view("node1");
      r.values[static_cast<size_t>(schema->field_index("cpuID"))] = std::string_view(id);
      r.values[static_cast<size_t>(schema->field_index("totalUtilization"))] = utilization;
      sink.on_record(r);
    }
  }
}

void write_cpu(const std::string& dir, double utilization, int cores) {
  write_log(dir, [&](format::RecordSink& sink) { cpu_records(sink, utilization, cores); });
}

TEST(OneLaneBridge, ResponseTimeBeyondQueueingThresholdWithIdleCpu) {
  TempDir olb, cpu_bound, no_cpu;
  write_scaling_series(olb.path(), {100, 300, 700, 1200, 2000}, {"response_time", "cpu"});
  write_scaling_series(cpu_bound.path(), {100, 105, 110, 115, 120}, {"response_time", "cpu"});
  write_scaling_series(no_cpu.path(), {100, 300, 700, 1200, 2000});
  for (int k = 0; k < 5; ++k) {
    write_cpu(experiment_path(olb.path(), "scaling-s" + std::to_string(k)), 0.2, 2);
    write_cpu(experiment_path(cpu_bound.path(), "scaling-s" + std::to_string(k)), 0.2 + 0.15 * k,
              2);
  }
  const NodeResult r = evaluate(olb.path(), "one_lane_bridge");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_EQ(r.evidence[0].values["cores"], 2);  // from the distinct cpuIDs
  EXPECT_EQ(evaluate(cpu_bound.path(), "one_lane_bridge").status, Status::kNotDetected);
  const NodeResult missing = evaluate(no_cpu.path(), "one_lane_bridge");
  EXPECT_EQ(missing.status, Status::kNotEvaluated);
  EXPECT_NE(missing.reason.find("cpu"), std::string::npos);
}

TEST(OneLaneBridge, OnlyStepsThatViolateTheRequirementCount) {
  // The same waits beyond CPU queueing, ten times shorter: they never reach
  // the test settings' 1000 ms at P99, so nothing is there for a bridge to
  // explain (the thesis' rule, violating_steps 0, still calls it one).
  TempDir d;
  const std::vector<double> rts = {10, 30, 70, 120, 200};
  write_scaling_series(d.path(), rts, {"response_time", "cpu"});
  for (int k = 0; k < 5; ++k)
    write_cpu(experiment_path(d.path(), "scaling-s" + std::to_string(k)), 0.2, 2);
  const NodeResult r = evaluate(d.path(), "one_lane_bridge");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  EXPECT_EQ(evaluate_with(d.path(), "one_lane_bridge", {{"violating_steps", 0}}).status,
            Status::kDetected);
}

// The One Lane Bridge tests below check the threshold itself, at every
// step above one user as the thesis does (violating_steps 0): their
// services take tens of ms against the test settings' 1000 ms.
NodeResult olb(const std::string& dir, std::map<std::string, double> params = {}) {
  params.emplace("violating_steps", 0);
  return evaluate_with(dir, "one_lane_bridge", params);
}

// Alg. 15 per node: the database server is a node of its own. Its CPU,
// saturated, explains waits that the application's idle CPU does not
// (scenarios tc11, tc14); the same waits beside an idle server are a bridge.
TEST(OneLaneBridge, ASaturatedDatabaseServerExplainsTheWait) {
  TempDir saturated, idle;
  for (const TempDir* d : {&saturated, &idle})
    write_scaling_series(d->path(), {100, 300, 700, 1200, 2000},
                         {"response_time", "cpu", "database"});
  const double server_cores[] = {0.3, 0.9, 0.97, 0.99, 1.0};  // of its one CPU
  const int instants = 159;  // every 100 ms of the 16 s stable phase
  for (int k = 0; k < 5; ++k) {
    for (const TempDir* d : {&saturated, &idle}) {
      const std::string dir = experiment_path(d->path(), "scaling-s" + std::to_string(k));
      write_cpu(dir, 0.2, 2);
      write_server_samples(
          dir, d == &saturated ? server_cores[k] : 0.1, instants, [](int) { return 0; }, "", 1);
    }
  }
  const NodeResult r = olb(saturated.path());
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  const NodeResult bridge = olb(idle.path());
  EXPECT_EQ(bridge.status, Status::kDetected) << bridge.reason;
  ASSERT_FALSE(bridge.evidence.empty());
  EXPECT_EQ(bridge.evidence[0].values["database_cpus"], 1);
  EXPECT_NE(bridge.evidence[0].detail.find("database server"), std::string::npos)
      << bridge.evidence[0].detail;
  // A server at 60% whose CPU time per request (32 ms) queues 53 ms at
  // most: 200 ms is a bridge (tc15). With rho_s (100 ms) as its demand, as
  // the thesis approximates it, the node would explain up to 265 ms.
  TempDir moderate;
  write_scaling_series(moderate.path(), {100, 200, 200, 200, 200},
                       {"response_time", "cpu", "database"});
  for (int k = 0; k < 5; ++k) {
    const std::string dir = experiment_path(moderate.path(), "scaling-s" + std::to_string(k));
    write_cpu(dir, 0.2, 2);
    write_server_samples(
        dir, 0.6, instants, [](int) { return 0; }, "", 1);
  }
  const NodeResult lock = olb(moderate.path());
  EXPECT_EQ(lock.status, Status::kDetected) << lock.reason;
}

// Scenarios tc11, tc14: a busy database server (70% of its CPU) serves a
// service whose requests spend 90% of all database time in it. That
// service's own demand on the server (33 ms per request, its share of the
// server's CPU) explains 165 ms; the average request's (19 ms) would not.
TEST(OneLaneBridge, TheDatabaseDemandIsTheServicesOwn) {
  for (const bool attributed : {true, false}) {
    TempDir d;
    const std::vector<std::string> probes =
        attributed ? std::vector<std::string>{"response_time", "cpu", "database"}
                   : std::vector<std::string>{"cpu", "database"};
    for (int k = 0; k < 5; ++k) {
      ExperimentSpec s = scaling_step(k, probes);
      s.noise_ms = 0;
      s.services = {"GET /heavy", "GET /light"};
      s.response_ms = [k](int, const std::string& service) {
        return service == "GET /heavy" ? (k == 0 ? 100.0 : 165.0) : 20.0;
      };
      const std::string dir = write_experiment(d.path(), s, 300 + static_cast<uint64_t>(k));
      write_log(dir, [&](format::RecordSink& sink) {
        cpu_records(sink, 0.2, 2);
        int64_t trace = 0x2b00'0000'0000'0001;
        for (int i = 0; i < s.requests; ++i) {
          const int64_t start = kT0 + i * s.inter_request_ns;
          for (const std::string& service : s.services) {
            const bool heavy = service == "GET /heavy";
            TraceWriter t(sink, trace++, start + 20'000);
            t.enter("shop::serve");
            t.database_call("SELECT 1", heavy ? 9 * kMs : kMs);
            t.advance_to(start + static_cast<int64_t>(s.response_ms(i, service) * 1e6) - 21'000);
            t.leave("shop::serve");
          }
        }
      });
      write_server_samples(
          dir, 0.7, 159, [](int) { return 0; }, "", 1);
    }
    const NodeResult r = olb(d.path());
    // Without traces the average request's demand is all there is.
    EXPECT_EQ(r.status, attributed ? Status::kNotDetected : Status::kDetected)
        << "attributed " << attributed << ": " << r.reason;
    const auto& points = r.charts["queueing"][0]["points"];
    ASSERT_FALSE(points.empty());
    EXPECT_NEAR(points[1]["database_demand_ms"].get<double>(), attributed ? 33.4 : 18.6, 0.5);
  }
}

// Per-instant CPU records (one "all" record per instant, 100 ms apart).
void write_cpu_series(const std::string& dir, const std::vector<double>& per_instant) {
  write_log(dir, [&](format::RecordSink& sink) {
    const format::RecordSchema* schema =
        format::find_builtin_schema("kieker.common.record.system.CPUUtilizationRecord");
    for (size_t t = 0; t < per_instant.size(); ++t) {
      for (const std::string id : {"all", "cpu0", "cpu1"}) {
        format::Record r;
        format::reset_to_defaults(r, schema);
        r.values[static_cast<size_t>(schema->field_index("timestamp"))] =
            kT0 + static_cast<int64_t>(t) * 100 * kMs;
        r.values[static_cast<size_t>(schema->field_index("hostname"))] = std::string_view("node1");
        r.values[static_cast<size_t>(schema->field_index("cpuID"))] = std::string_view(id);
        r.values[static_cast<size_t>(schema->field_index("totalUtilization"))] = per_instant[t];
        sink.on_record(r);
      }
    }
  });
}

// Scenario tc10: a CPU-bound service a hair above the threshold (noise) is
// no bridge; the same service far above it is. And a CPU at 85% on average
// that ran at 70% and 100% in turns (its mean's upper bound 94%) explains
// 600 ms (M/M/2 allows 935 ms at 94%, 386 ms at 85%): near saturation the
// model is too sensitive to U for its error to be ignored.
TEST(OneLaneBridge, OnlyASignificantExcessOnAnUnsaturatedNodeIsABridge) {
  TempDir hair, far, busy;
  // 2 cores at 20%: the threshold is about 104.6 ms over 100 ms alone; the
  // loaded steps measure 106 ms +- 40 ms: above it, but not significantly.
  write_scaling_series(hair.path(), {100, 106, 106, 106, 106}, {"response_time", "cpu"}, 40);
  write_scaling_series(far.path(), {100, 160, 160, 160, 160}, {"response_time", "cpu"});
  write_scaling_series(busy.path(), {100, 600, 600, 600, 600}, {"response_time", "cpu"});
  std::vector<double> busy_cpu(100);
  for (size_t t = 0; t < busy_cpu.size(); ++t) busy_cpu[t] = t < 50 ? 0.7 : 1.0;
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    write_cpu(experiment_path(hair.path(), id), 0.2, 2);
    write_cpu(experiment_path(far.path(), id), 0.2, 2);
    write_cpu_series(experiment_path(busy.path(), id), busy_cpu);
  }
  const NodeResult noise = olb(hair.path());
  EXPECT_EQ(noise.status, Status::kNotDetected);
  int above = 0;  // loaded steps whose mean is above the threshold: the t-test decided
  for (const auto& p : noise.charts["queueing"][0]["points"])
    above += p["measured"].get<double>() > p["threshold"].get<double>();
  EXPECT_GE(above, 1);
  const NodeResult bridge = olb(far.path());
  EXPECT_EQ(bridge.status, Status::kDetected) << bridge.reason;
  ASSERT_FALSE(bridge.evidence.empty());
  EXPECT_LT(bridge.evidence[0].p_value, 0.05);
  EXPECT_EQ(olb(busy.path()).status, Status::kNotDetected);
  EXPECT_EQ(olb(busy.path(), {{"utilization_bound", 0}}).status, Status::kDetected);
}

// The threshold rises steeply with U near saturation, so U's own error
// must widen it (utilization_bound). Two CPUs at 70% on average: 240 ms
// against 100 ms alone exceeds the 206 ms that M/M/2 explains at 70%. When
// the CPU ran at 55% for the first half of each step and 85% for the
// second, the mean's error is large (its 10 batch means spread from 0.55
// to 0.85) and its upper bound (79%) explains 285 ms: not a bridge. The
// same mean from instants that alternate (no autocorrelation, batch means
// all 0.7) is as certain as it looks: a bridge.
TEST(OneLaneBridge, AnUncertainUtilizationWidensTheThreshold) {
  for (const bool blocks : {true, false}) {
    TempDir d;
    write_scaling_series(d.path(), {100, 240, 240, 240, 240}, {"response_time", "cpu"});
    std::vector<double> series(100);
    for (size_t t = 0; t < series.size(); ++t)
      series[t] = (blocks ? t < 50 : t % 2 == 0) ? 0.55 : 0.85;
    for (int k = 0; k < 5; ++k)
      write_cpu_series(experiment_path(d.path(), "scaling-s" + std::to_string(k)), series);
    const NodeResult r = olb(d.path());
    EXPECT_EQ(r.status, blocks ? Status::kNotDetected : Status::kDetected) << r.reason;
    const auto& point = r.charts["queueing"][0]["points"][0];
    EXPECT_NEAR(point["utilization"].get<double>(), 0.7, 1e-9);
    EXPECT_NEAR(point["utilization_bound"].get<double>(), blocks ? 0.79 : 0.7, 0.01);
    EXPECT_EQ(olb(d.path(), {{"utilization_bound", 0}}).status, Status::kDetected);
  }
}

// The ledger's l10 in run ledger-s32 and tickets' t08 in its validation
// run (CPU-bound SQLite scans, no lock): over the threshold at 3 users
// only, within it at 6, 9 and 12 as the CPU filled. Alg. 15
// (excess_persists 0) calls that a bridge; sonde's rule does not, as the
// CPU explains the higher loads, and keeps a lock whose waits stay above
// the CPU's explanation, and one that appears only at the upper loads.
TEST(OneLaneBridge, AnExcessTheCpuExplainsAtHigherLoadsIsNoBridge) {
  TempDir scan, lock, late;
  write_scaling_series(scan.path(), {100, 160, 170, 160, 220}, {"response_time", "cpu"});
  write_scaling_series(lock.path(), {100, 300, 700, 1200, 2000}, {"response_time", "cpu"});
  write_scaling_series(late.path(), {100, 102, 104, 400, 900}, {"response_time", "cpu"});
  const double cpu[] = {0.2, 0.4, 0.64, 0.73, 0.88};
  for (int k = 0; k < 5; ++k) {
    write_cpu(experiment_path(scan.path(), "scaling-s" + std::to_string(k)), cpu[k], 2);
    write_cpu(experiment_path(lock.path(), "scaling-s" + std::to_string(k)), 0.2, 2);
    write_cpu(experiment_path(late.path(), "scaling-s" + std::to_string(k)), 0.2, 2);
  }
  const NodeResult r = olb(scan.path());
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].values["found"], false);
  EXPECT_EQ(r.evidence[0].values["steps_over"], 1);
  EXPECT_EQ(r.evidence[0].values["explained_at_users"], 50);
  EXPECT_NE(r.evidence[0].detail.find("did not persist"), std::string::npos)
      << r.evidence[0].detail;
  EXPECT_EQ(olb(scan.path(), {{"excess_persists", 0}}).status, Status::kDetected);
  EXPECT_EQ(olb(lock.path()).status, Status::kDetected);
  const NodeResult upper = olb(late.path());
  EXPECT_EQ(upper.status, Status::kDetected) << upper.reason;
  EXPECT_EQ(upper.evidence.size(), 2u);
}

// What says nothing against a bridge (excess_persists 1): a saturated
// step above it (the CPU at 100% explains any wait, so a lock's waits
// cannot show there), and a step that does not count (it meets its
// requirement, violating_steps 1). An explained step between two over
// steps does not drop it either: the highest over step has none above.
TEST(OneLaneBridge, OnlyAnExplainedHigherStepDropsABridge) {
  TempDir saturated, between, meets;
  write_scaling_series(saturated.path(), {100, 300, 700, 1200, 2000}, {"response_time", "cpu"});
  write_scaling_series(between.path(), {100, 300, 100, 900, 900}, {"response_time", "cpu"});
  write_scaling_series(meets.path(), {100, 1500, 1600, 1700, 100}, {"response_time", "cpu"});
  for (int k = 0; k < 5; ++k) {
    const std::string step = "scaling-s" + std::to_string(k);
    write_cpu(experiment_path(saturated.path(), step), k == 4 ? 1.0 : 0.2, 2);
    write_cpu(experiment_path(between.path(), step), 0.2, 2);
    write_cpu(experiment_path(meets.path(), step), 0.2, 2);
  }
  EXPECT_EQ(olb(saturated.path()).status, Status::kDetected);
  const NodeResult r = olb(between.path());
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  EXPECT_EQ(r.evidence.size(), 3u);
  // The test settings require 1000 ms at P99: the last step meets it.
  EXPECT_EQ(evaluate(meets.path(), "one_lane_bridge").status, Status::kDetected);
  EXPECT_EQ(olb(meets.path()).status, Status::kNotDetected);
}

// Near saturation the threshold is huge and the utilization's upper bound
// may or may not reach 1. Explained is judged at the lower bound: here the
// last step's thirteen instants (twelve at 100%, one at 30%) have an upper
// bound of 1, which would explain any wait and say nothing, and a lower
// bound of about 0.85, at which CPU queueing explains up to about 387 ms
// (100 ms alone, two cores): the step's 220 ms are explained, so the
// excess at the lower loads did not persist.
TEST(OneLaneBridge, ExplainedIsJudgedAtTheLowerBoundOfTheUtilization) {
  TempDir d;
  write_scaling_series(d.path(), {100, 160, 190, 200, 220}, {"response_time", "cpu"});
  for (int k = 0; k < 4; ++k)
    write_cpu(experiment_path(d.path(), "scaling-s" + std::to_string(k)), 0.4, 2);
  std::vector<double> top(13, 1.0);
  top[6] = 0.3;
  write_cpu_series(experiment_path(d.path(), "scaling-s4"), top);
  const NodeResult r = olb(d.path());
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  const auto& last = r.charts["queueing"][0]["points"][3];
  EXPECT_EQ(last["utilization_bound"].get<double>(), 1.0);
  EXPECT_NEAR(last["utilization_lower_bound"].get<double>(), 0.85, 0.03);
  EXPECT_NEAR(last["threshold_at_lower_bound"].get<double>(), 387, 15);
  EXPECT_EQ(olb(d.path(), {{"excess_persists", 0}}).status, Status::kDetected);
}

// A step of 13 instants (libsonde's default period of 1 s): too few for
// ten batch means, so the bound comes from the instants' own standard
// error. Until 2026-12-04 such a step got no bound at all (the mean, 0.69,
// and a bridge at 240 ms against M/M/2's 199); its upper bound, about
// 0.77, explains 255 ms.
TEST(OneLaneBridge, AFewInstantsStillBoundTheUtilization) {
  TempDir d;
  write_scaling_series(d.path(), {100, 240, 240, 240, 240}, {"response_time", "cpu"});
  std::vector<double> series(13);
  for (size_t t = 0; t < series.size(); ++t) series[t] = t % 2 == 0 ? 0.55 : 0.85;
  for (int k = 0; k < 5; ++k)
    write_cpu_series(experiment_path(d.path(), "scaling-s" + std::to_string(k)), series);
  const NodeResult r = olb(d.path());
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  const auto& point = r.charts["queueing"][0]["points"][0];
  const double u = point["utilization"].get<double>();
  EXPECT_NEAR(u, (7 * 0.55 + 6 * 0.85) / 13, 1e-9);
  EXPECT_NEAR(point["utilization_bound"].get<double>(), 0.765, 0.01);
  EXPECT_EQ(olb(d.path(), {{"utilization_bound", 0}}).status, Status::kDetected);
}

// Scenario tc15: a service of 4 ms alone that waits 17 ms at 12 users for a
// table lock, the CPU at a quarter. The thesis' floor of 15 ms for the
// single-user time hid it; sonde has no floor.
TEST(OneLaneBridge, AShortServiceThatWaitsFourTimesLongerIsABridge) {
  TempDir d;
  write_scaling_series(d.path(), {4.4, 5, 6, 10.7, 16.9}, {"response_time", "cpu"});
  for (int k = 0; k < 5; ++k)
    write_cpu(experiment_path(d.path(), "scaling-s" + std::to_string(k)), 0.26, 1);
  EXPECT_EQ(olb(d.path()).status, Status::kDetected);
  EXPECT_EQ(olb(d.path(), {{"single_user_floor_ms", 15}}).status, Status::kNotDetected);
}

// Run shop-full-1's tc10 and tc15 (2026-11-28). tc10: a CPU-bound service
// 6% above the threshold at 3 users, with small per-request errors, while
// its single-user mean varied by 0.33 ms between the run's single-user
// experiments: no bridge, as the threshold itself is that uncertain. tc15:
// a 2.8-ms service waiting for a table lock, 7.05 ms at 12 users against
// 3.8 ms that queueing explains: a bridge however the single-user mean
// varies. Both carry the same run-to-run noise (six single-user
// experiments, 6.0-6.8 ms); the per-request test alone (noise_test 0)
// calls the first a bridge too, by Alg. 15's any-step rule
// (excess_persists 0; with 1 its higher loads are explained).
TEST(OneLaneBridge, AnExcessWithinTheSingleUserMeansNoiseIsNoBridge) {
  for (const bool lock : {false, true}) {
    TempDir d;
    const std::vector<double> loaded = lock ? std::vector<double>{6.06, 6.2, 7.0, 10.0, 13.0}
                                            : std::vector<double>{6.06, 6.79, 7.34, 8.07, 9.38};
    write_scaling_series(d.path(), loaded, {"response_time", "cpu"}, 0.6);
    const double utilization[] = {0.1, 0.22, 0.37, 0.5, 0.64};
    for (int k = 0; k < 5; ++k)
      write_cpu(experiment_path(d.path(), "scaling-s" + std::to_string(k)), utilization[k], 2);
    // Five more single-user experiments (the Ramp's windows and the
    // single-user test): means 6.0 to 6.83 ms.
    const double repeats[] = {6.0, 6.57, 6.27, 6.83, 6.08};
    for (int w = 0; w < 5; ++w) {
      ExperimentSpec s;
      s.id = "ramp-w" + std::to_string(w + 1);
      s.kind = "custom";
      s.series = "ramp";
      s.step = w + 1;
      s.users = 1;
      s.requests = 130;
      s.noise_ms = 0.6;
      s.response_ms = [&](int, const std::string&) { return repeats[w]; };
      write_experiment(d.path(), s, 500 + static_cast<uint64_t>(w));
    }
    const NodeResult r = olb(d.path());
    EXPECT_EQ(r.status, lock ? Status::kDetected : Status::kNotDetected) << r.reason;
    EXPECT_EQ(olb(d.path(), {{"noise_test", 0}, {"excess_persists", 0}}).status, Status::kDetected);
  }
}

// A scaling series whose requests each run one trace that sends one
// message: request i of step k starts 20 ms after request i-1 and takes
// rts[k] ms (+-1%); its send takes send_ms(k) of that time. CPU at 20%.
void write_sending_series(const std::string& root, const std::vector<double>& rts,
                          const std::function<double(int)>& send_ms) {
  write_scaling_series(root, rts, {"response_time", "cpu", "messaging"}, -1);
  for (int k = 0; k < 5; ++k) {
    const std::string dir = experiment_path(root, "scaling-s" + std::to_string(k));
    // write_scaling_series' noise is 5% of the step's time: the trace ends
    // inside every request's interval at 90% of it.
    const double rt = rts[static_cast<size_t>(k)];
    write_log(dir, [&](format::RecordSink& sink) {
      cpu_records(sink, 0.2, 2);
      for (int i = 0; i < 300; ++i) {
        const int64_t start = kT0 + i * 20 * kMs;
        TraceWriter t(sink, i + 1, start + 50'000);
        t.enter("Orders.place");
        t.send("orders>inventory", 24, static_cast<int64_t>(send_ms(k) * 1e6));
        t.advance_to(start + static_cast<int64_t>(0.9 * rt * 1e6));
        t.leave("Orders.place");
      }
    });
  }
}

TEST(OneLaneBridge, WaitsInMessageSendsAreNotABridge) {
  // Thesis TC19/TC20: idle CPU, response times far beyond the queueing
  // threshold, but the requests wait to send (a full queue, a slow
  // broker): the growth is messaging's (Excessive Messaging). The same
  // response times with sends of 5 us are a bridge holding everything,
  // messages included (scenario tc21); so are waits of which the sends
  // explain only 40%.
  const std::vector<double> rts = {100, 300, 700, 1200, 2000};
  TempDir sends, quick, partly;
  write_sending_series(sends.path(), rts, [&](int k) { return 2 + (rts[k] - rts[0]); });
  write_sending_series(quick.path(), rts, [](int) { return 0.005; });
  write_sending_series(partly.path(), rts, [&](int k) { return 2 + 0.4 * (rts[k] - rts[0]); });

  const NodeResult r = evaluate(sends.path(), "one_lane_bridge");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  EXPECT_NE(r.reason.find("message sends"), std::string::npos) << r.reason;
  // Not detected, the service still shows its step nearest the threshold,
  // as checked, and why it is no bridge.
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].values.value("found", true), false);
  EXPECT_GT(r.evidence[0].values["send_growth_ms"].get<double>(), 0) << r.evidence[0].detail;
  EXPECT_NE(r.evidence[0].detail.find("message sends"), std::string::npos) << r.evidence[0].detail;
  const NodeResult bridge = evaluate(quick.path(), "one_lane_bridge");
  EXPECT_EQ(bridge.status, Status::kDetected) << bridge.reason;
  const NodeResult both = evaluate(partly.path(), "one_lane_bridge");
  ASSERT_EQ(both.status, Status::kDetected) << both.reason;
  // The evidence says how much of the mean was sending: 0.4 x 1900 ms at 50 users.
  const auto at_50 = std::find_if(
      both.evidence.begin(), both.evidence.end(),
      [](const Evidence& e) { return e.detail.find("at 50 users") != std::string::npos; });
  ASSERT_NE(at_50, both.evidence.end());
  const Evidence& top = *at_50;
  EXPECT_NEAR(top.values["send_growth_ms"].get<double>(), 760, 1) << top.detail;
  EXPECT_NE(top.detail.find("message sends"), std::string::npos) << top.detail;
  // The thesis' rule (network_check 0) calls the first a bridge.
  EXPECT_EQ(evaluate_with(sends.path(), "one_lane_bridge", {{"network_check", 0}}).status,
            Status::kDetected);
}

void write_lock_waits(const std::string& dir, double wait_ms, const std::string& lock,
                      int waits = 200) {
  write_log(dir, [&](format::RecordSink& sink) {
    for (int i = 0; i < waits; ++i) {
      format::Record r;
      format::reset_to_defaults(r, &lock_wait_schema());
      r.values[0] = kT0 + i * 10 * kMs;
      r.values[1] = int64_t{i};
      r.values[3] = static_cast<int64_t>((wait_ms + (i % 10) * wait_ms * 0.01) * 1e6);
      r.values[4] = int64_t{-1};
      r.values[5] = std::string_view(lock);
      r.values[6] = std::string_view("Cart::add");
      sink.on_record(r);
    }
  });
}

}  // namespace
}  // namespace sonde::diagnose::test
