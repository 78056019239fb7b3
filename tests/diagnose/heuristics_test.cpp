// Each heuristic on synthetic experiment data: detected when the pattern is
// planted, not detected when it is absent, not_evaluated when its data is
// missing. Patterns are far from the decision boundaries, so the outcome
// follows from the planted parameters, not from the seeded noise.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/sql_shape.hpp"
#include "diagnose/stats/t_test.hpp"
#include "diagnose_test_support.hpp"
#include "format/record.hpp"

namespace sonde::diagnose::test {
namespace {

ExperimentSpec load_test(std::function<double(int, const std::string&)> rt, int requests = 2000) {
  ExperimentSpec s;
  s.id = "load-u50";
  s.users = 50;
  s.requests = requests;
  s.response_ms = std::move(rt);
  return s;
}

// Scaling series, users 1, 13, 25, 37, 50; rt(step) ms per request.
// noise_ms: uniform +- noise per request (default: 5% of the step's time).
void write_scaling(const std::string& root, const std::vector<double>& rt,
                   std::vector<std::string> probes = {"response_time"}, double noise_ms = -1) {
  for (int k = 0; k < 5; ++k) {
    ExperimentSpec s = scaling_step(k, probes);
    const double v = rt[static_cast<size_t>(k)];
    s.response_ms = [v](int, const std::string&) { return v; };
    s.noise_ms = noise_ms >= 0 ? noise_ms : v * 0.05;
    write_experiment(root, s, 100 + static_cast<uint64_t>(k));
  }
}

std::string experiment_dir(const std::string& root, const std::string& id) {
  return root + "/experiments/" + id;
}

TEST(PerformanceProblem, DetectsViolatedPercentile) {
  TempDir slow, fast, none;
  write_experiment(slow.path(), load_test([](int, const std::string&) { return 1500; }));
  write_experiment(fast.path(), load_test([](int, const std::string&) { return 100; }));
  ExperimentSpec single;
  single.id = "single";
  single.kind = "single_user";
  write_experiment(none.path(), single);
  const NodeResult r = evaluate(slow.path(), "performance_problem");
  EXPECT_EQ(r.status, Status::kDetected);
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_EQ(r.evidence[0].location, "GET /product");
  EXPECT_GT(r.evidence[0].effect_size, 1.4);
  EXPECT_EQ(evaluate(fast.path(), "performance_problem").status, Status::kNotDetected);
  EXPECT_EQ(evaluate(none.path(), "performance_problem").status, Status::kNotEvaluated);
}

// Windows of response times for the Ramp: window w's request i takes
// ms(w, i).
void write_ramp_windows(const TempDir& d, const std::function<double(int w, int i)>& ms) {
  for (int w = 1; w <= 4; ++w) {
    ExperimentSpec s;
    s.id = "ramp-w" + std::to_string(w);
    s.kind = "custom";
    s.series = "ramp";
    s.step = w;
    s.users = 1;
    s.requests = 200;
    s.noise_ms = 0;
    s.response_ms = [w, ms](int i, const std::string&) { return ms(w, i); };
    write_experiment(d.path(), s, static_cast<uint64_t>(w));
  }
}

// The thesis' rule (window_rule 0): neighbouring windows compared per
// request, without the materiality test, whose own tests follow below.
std::map<std::string, double> neighbour_rule(double rank_test) {
  return {{"window_rule", 0}, {"min_growth_share", 0}, {"rank_test", rank_test}};
}

// Windows 1-4 at the given levels (ms), each with the same jitter of
// 0-0.45 ms (mean 0.225 ms).
void write_ramp_levels(const TempDir& d, std::array<double, 4> levels) {
  write_ramp_windows(d, [levels](int w, int i) { return levels[w - 1] + (i % 10) * 0.05; });
}

TEST(TheRamp, APauseInOneWindowDoesNotHideTheRampFromTheRankTest) {
  // Medians 5, 6, 7, 8 ms; window 3 catches two 300-ms pauses, so its mean
  // (about 10 ms) is above window 4's: a test on means sees no increase
  // from 3 to 4, the rank test does (scenario tc07, a blurred ramp).
  TempDir d;
  write_ramp_windows(d, [](int w, int i) {
    if (w == 3 && (i == 50 || i == 150)) return 300.0;
    return 4.0 + w + (i % 10) * 0.1;
  });
  const NodeResult r = evaluate_with(d.path(), "the_ramp", neighbour_rule(2));
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);  // three neighbour comparisons, then the growth
  EXPECT_EQ(r.evidence[2].test, "Mann-Whitney U or Welch's t-test (one-sided, increase)");
  EXPECT_LT(r.evidence[2].p_value, 0.05);
  EXPECT_GT(r.evidence[2].values["welch_p"].get<double>(), 0.05) << "the mean fell";
  // The thesis' test on means misses it.
  EXPECT_EQ(evaluate_with(d.path(), "the_ramp", neighbour_rule(0)).status, Status::kNotDetected);
}

// A ramp whose growth is uneven at short time scales (the ledger's l04:
// SQLite's write-ahead log slows reads until a checkpoint merges it): in
// window 4 most requests are a little faster than window 3's, but a third
// of them, after the log grew again, much slower. The median fell, the
// mean rose significantly: the thesis' test on means sees the ramp, a rule
// that asks the median to rise (rank_test 1) does not.
TEST(TheRamp, AnUnevenRampWhoseMedianFallsOnceIsARamp) {
  TempDir d;
  write_ramp_windows(d, [](int w, int i) {
    const double jitter = (i % 10) * 0.1;
    if (w < 4) return 3.0 * w + jitter;
    return (i % 3 == 0 ? 14.0 : 8.0) + jitter;  // median 8.x < 9.x, mean 10.x > 9.x
  });
  const NodeResult r = evaluate_with(d.path(), "the_ramp", neighbour_rule(2));
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);
  EXPECT_LT(r.evidence[2].values["median_after"].get<double>(),
            r.evidence[2].values["median_before"].get<double>());
  EXPECT_LT(r.evidence[2].values["welch_p"].get<double>(), 0.05);
  EXPECT_EQ(evaluate_with(d.path(), "the_ramp", neighbour_rule(1)).status, Status::kNotDetected);
  EXPECT_EQ(evaluate_with(d.path(), "the_ramp", neighbour_rule(0)).status, Status::kDetected);
  // Every window lies above the first, and the growth (3.45 -> 10.45 ms)
  // is two thirds of the last mean: a ramp by the default rule too.
  EXPECT_EQ(evaluate(d.path(), "the_ramp").status, Status::kDetected);
}

// Either test may find an increase, but every window must rise: windows
// that go up, down and up again are no ramp under any of the rules.
TEST(TheRamp, WindowsThatFallOnceByBothTestsAreNoRamp) {
  TempDir d;
  const double level[] = {0, 5, 8, 6, 9};
  write_ramp_windows(d, [&level](int w, int i) { return level[w] + (i % 10) * 0.1; });
  for (int rank_test : {0, 1, 2})
    EXPECT_EQ(evaluate_with(d.path(), "the_ramp", neighbour_rule(rank_test)).status,
              Status::kNotDetected)
        << "rank_test " << rank_test;
}

// A ramp whose last window happens to be a little faster than the one
// before (the shop's tc06 in run shop-full-2: 1.05 -> 5.22 -> 6.98 -> 6.15
// ms): every later window stays far above the first, so the default rule
// sees the ramp; the thesis' neighbour rule does not.
TEST(TheRamp, ARampWhoseLastWindowDipsIsStillARamp) {
  TempDir d;
  write_ramp_levels(d, {1.0, 5.2, 7.0, 6.1});
  const NodeResult r = evaluate(d.path(), "the_ramp");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);  // windows 2, 3, 4 against window 1, then the growth
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(r.evidence[k].values["significant"].get<bool>()) << k;
  EXPECT_TRUE(r.evidence[3].values["material"].get<bool>());
  EXPECT_EQ(evaluate_with(d.path(), "the_ramp", neighbour_rule(2)).status, Status::kNotDetected);
}

// A window that falls back to where the first one was breaks the ramp:
// state that accumulates does not go away.
TEST(TheRamp, AWindowBackAtTheStartIsNoRamp) {
  TempDir d;
  write_ramp_levels(d, {1.0, 6.0, 1.0, 7.0});
  const NodeResult r = evaluate(d.path(), "the_ramp");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);
  EXPECT_FALSE(r.evidence[1].values["significant"].get<bool>());
  EXPECT_TRUE(r.evidence[3].values["material"].get<bool>());  // the growth alone is not enough
}

// Significant but immaterial: a system without a ramp that drifts by a few
// per cent from window to window (the ledger's l07 in run full-3: POST
// /transfers 5.02 -> 5.36 -> 6.13 -> 6.87 ms, the growth 27% of the last
// mean). Thousands of requests make such a drift significant; it is not
// what makes the service miss its requirement.
TEST(TheRamp, ADriftOfAFewPerCentIsNoRamp) {
  TempDir d;
  write_ramp_levels(d, {5.0, 5.4, 6.1, 6.9});
  const NodeResult r = evaluate(d.path(), "the_ramp");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(r.evidence[k].values["significant"].get<bool>()) << k;
  EXPECT_NEAR(r.evidence[3].values["share"].get<double>(), 1 - 5.225 / 7.125, 1e-9);
  EXPECT_FALSE(r.evidence[3].values["material"].get<bool>());
  EXPECT_EQ(evaluate_with(d.path(), "the_ramp", {{"min_growth_share", 0}}).status,
            Status::kDetected);
}

// Windows judged by their batch means: later windows that are fast except
// for one burst of 20 slow requests (a stall, not state that grows) have
// means far above the first window's, and per request the rise is
// significant, but the burst is one event: ten batch means see one high
// batch, and the rise is not significant.
TEST(TheRamp, ABurstOfSlowRequestsIsOneEventNotARamp) {
  TempDir d;
  write_ramp_windows(d, [](int w, int i) {
    const int burst = 20 * w;  // somewhere else in each window
    return w > 1 && i >= burst && i < burst + 20 ? 100.0 : 2.0 + (i % 10) * 0.05;
  });
  const NodeResult r = evaluate(d.path(), "the_ramp");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);
  const Evidence& last = r.evidence[2];
  EXPECT_GT(last.p_value, 0.05);
  EXPECT_DOUBLE_EQ(last.values["df_after"].get<double>(), 9);
  EXPECT_TRUE(r.evidence[3].values["material"].get<bool>());
  // The same two windows per request: significant.
  const ExperimentData data = load_experiment_data(d.path());
  const auto windows = data.series("ramp");
  ASSERT_EQ(windows.size(), 4u);
  const auto first = windows[0]->response_times("GET /product");
  const auto fourth = windows[3]->response_times("GET /product");
  EXPECT_LT(stats::welch_t_test(first, fourth).p_greater, 0.05);
}

TEST(ApplicationHiccups, DetectsBurstsButNotContinuousViolation) {
  TempDir hiccup, continuous;
  // 2000 requests every 20 ms = 40 s; buckets of min(50 x 20 ms, 5 s) = 1 s.
  // Two pauses of ~1.2 s where responses take 2 s.
  write_experiment(hiccup.path(), load_test([](int i, const std::string&) {
                     return (i >= 500 && i < 560) || (i >= 1400 && i < 1460) ? 2000.0 : 100.0;
                   }));
  write_experiment(continuous.path(), load_test([](int, const std::string&) { return 2000; }));
  const NodeResult r = evaluate(hiccup.path(), "application_hiccups");
  EXPECT_EQ(r.status, Status::kDetected);
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].values["hiccups"].size(), 2u);
  EXPECT_EQ(evaluate(continuous.path(), "application_hiccups").status, Status::kNotDetected);
  // The mirror image: continuous violation is CVR, hiccups are not.
  EXPECT_EQ(evaluate(continuous.path(), "continuously_violated_requirements").status,
            Status::kDetected);
  EXPECT_EQ(evaluate(hiccup.path(), "continuously_violated_requirements").status,
            Status::kNotDetected);
}

TEST(ApplicationHiccups, AResponseTimeThatRisesSteadilyIsATrendNotHiccups) {
  // 40 s rising from 100 to 1300 ms, +-150 ms in blocks of 60 requests: the
  // P99 crosses 1000 ms after about 30 s and flickers around it, several
  // violating periods covering under half the time (scenario tc06, a ramp).
  TempDir ramp;
  write_experiment(ramp.path(), load_test([](int i, const std::string&) {
                     return 100.0 + 0.6 * i + ((i / 60) % 2 != 0 ? 150.0 : -150.0);
                   }));
  // (min_peak_factor 0: the flicker would not stand out either; here the
  // trend alone must decide.)
  NodeResult r = evaluate_with(ramp.path(), "application_hiccups", {{"min_peak_factor", 0}});
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_GE(r.evidence[0].values["hiccups"].size(), 2u) << "the thesis' rule alone finds hiccups";
  EXPECT_LT(r.evidence[0].values["share"].get<double>(), 0.5);
  EXPECT_LT(r.evidence[0].values["trend_p"].get<double>(), 0.05);
  EXPECT_GT(r.evidence[0].values["trend_position"].get<double>(), 0.5);
  EXPECT_NE(r.evidence[0].detail.find("towards the end"), std::string::npos)
      << r.evidence[0].detail;
  // With both checks off the thesis' rule calls it hiccups.
  EXPECT_EQ(
      evaluate_with(ramp.path(), "application_hiccups", {{"trend_test", 0}, {"min_peak_factor", 0}})
          .status,
      Status::kDetected);
  EXPECT_EQ(evaluate(ramp.path(), "application_hiccups").status, Status::kNotDetected);
  // Pauses on a baseline that drifts up (100 -> 500 ms): the level has a
  // trend, the violations do not; still hiccups.
  TempDir hiccup;
  write_experiment(hiccup.path(), load_test([](int i, const std::string&) {
                     return (i >= 500 && i < 560) || (i >= 1400 && i < 1460) ? 2000.0
                                                                             : 100.0 + 0.2 * i;
                   }));
  r = evaluate(hiccup.path(), "application_hiccups");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].values["hiccups"].size(), 2u);
  EXPECT_GE(r.evidence[0].values["trend_p"].get<double>(), 0.05);
}

// Scenario tc14: under a saturated database a service's normal level sits
// just under the threshold (P99 about 800 ms against 1000) and some
// buckets cross it (1100-1300 ms): noise, not hiccups. Pauses of 3 s on the
// same level stand out.
TEST(ApplicationHiccups, FlickerJustOverTheThresholdIsNotAHiccup) {
  TempDir flicker, pauses;
  // Buckets of 1 s (50 requests); every 7th bucket slightly over.
  write_experiment(flicker.path(), load_test([](int i, const std::string&) {
                     return (i / 50) % 7 == 3 ? 1100.0 + 30.0 * ((i / 50) % 5) : 800.0;
                   }));
  write_experiment(pauses.path(), load_test([](int i, const std::string&) {
                     return (i / 50) % 7 == 3 ? 3000.0 : 800.0;
                   }));
  const NodeResult r = evaluate(flicker.path(), "application_hiccups");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_GE(r.evidence[0].values["flickers"].get<int>(), 4);
  EXPECT_NE(r.evidence[0].detail.find("noise around the threshold"), std::string::npos)
      << r.evidence[0].detail;
  // The thesis' rule alone (no peak factor) calls the flicker hiccups.
  EXPECT_EQ(evaluate_with(flicker.path(), "application_hiccups", {{"min_peak_factor", 0}}).status,
            Status::kDetected);
  EXPECT_EQ(evaluate(pauses.path(), "application_hiccups").status, Status::kDetected);
}

// Scenario tc15 (run sc19): one bucket of a lock-bound run peaked at 3.8x
// the typical level. Hiccups recur; one violating period is a blip. Two
// pauses of the same size are hiccups.
TEST(ApplicationHiccups, ASingleBlipIsNotHiccups) {
  TempDir blip, twice;
  // Buckets of 1 s (50 requests): bucket 12 (of 40) at 3000 ms; in the
  // other run buckets 12 and 30.
  write_experiment(blip.path(), load_test([](int i, const std::string&) {
                     return i / 50 == 12 ? 3000.0 : 400.0;
                   }));
  write_experiment(twice.path(), load_test([](int i, const std::string&) {
                     return i / 50 == 12 || i / 50 == 30 ? 3000.0 : 400.0;
                   }));
  const NodeResult r = evaluate(blip.path(), "application_hiccups");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].values["hiccups"].size(), 1u);
  EXPECT_NE(r.evidence[0].detail.find("a single blip"), std::string::npos) << r.evidence[0].detail;
  // The thesis' rule (any hiccup) calls it one.
  EXPECT_EQ(evaluate_with(blip.path(), "application_hiccups", {{"min_hiccups", 1}}).status,
            Status::kDetected);
  const NodeResult t = evaluate(twice.path(), "application_hiccups");
  EXPECT_EQ(t.status, Status::kDetected) << t.reason;
  EXPECT_EQ(t.evidence[0].values["hiccups"].size(), 2u);
}

TEST(TheRamp, DetectsGrowthAcrossTimeWindows) {
  TempDir ramp, flat, missing;
  for (int w = 1; w <= 4; ++w) {
    for (auto* dir : {&ramp, &flat}) {
      ExperimentSpec s;
      s.id = "ramp-w" + std::to_string(w);
      s.kind = "single_user";
      s.series = "ramp";
      s.step = w;
      s.users = 1;
      s.requests = 200;
      const double v = dir == &ramp ? 100.0 * w : 100.0;
      s.response_ms = [v](int, const std::string&) { return v; };
      write_experiment(dir->path(), s, static_cast<uint64_t>(w));
    }
  }
  write_experiment(missing.path(), load_test([](int, const std::string&) { return 100; }));
  const NodeResult r = evaluate(ramp.path(), "the_ramp");
  EXPECT_EQ(r.status, Status::kDetected);
  ASSERT_EQ(r.evidence.size(), 4u);  // windows 2-4 against window 1, then the growth
  for (int k = 0; k < 3; ++k) EXPECT_LT(r.evidence[k].p_value, 0.05) << k;
  EXPECT_NEAR(r.evidence[3].effect_size, 0.75, 0.01);  // (400 - 100) / 400, noise +-5 ms
  EXPECT_EQ(evaluate(flat.path(), "the_ramp").status, Status::kNotDetected);
  EXPECT_EQ(evaluate(missing.path(), "the_ramp").status, Status::kNotEvaluated);
  // Under Performance Problem only the services that violate are examined.
  const auto violating = [](const std::string& service) {
    return std::map<std::string, nlohmann::json>{
        {"performance_problem", {{"violating_services", {service}}}}};
  };
  EXPECT_EQ(evaluate(ramp.path(), "the_ramp", violating("GET /product")).status, Status::kDetected);
  EXPECT_EQ(evaluate(ramp.path(), "the_ramp", violating("GET /search")).status,
            Status::kNotDetected);
}

TEST(TrafficJam, DetectsResponseTimeGrowingIntoViolation) {
  TempDir jam, flat_slow, missing;
  write_scaling(jam.path(), {100, 300, 700, 1200, 2000});
  write_scaling(flat_slow.path(), {1500, 1500, 1500, 1500, 1500});
  write_experiment(missing.path(), load_test([](int, const std::string&) { return 100; }));
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
  write_scaling(grows.path(), {1200, 1100, 1800, 2600, 3800});
  write_scaling(flat_slow.path(), {1500, 1450, 1500, 1550, 1500});
  const NodeResult r = evaluate(grows.path(), "traffic_jam");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  bool slope_evidence = false;
  for (const Evidence& ev : r.evidence) {
    if (ev.test.find("slope") == std::string::npos) continue;
    slope_evidence = true;
    EXPECT_NE(ev.detail.find("already with 1 user(s)"), std::string::npos) << ev.detail;
    EXPECT_GT(ev.effect_size, 40);  // ms per user: (3800 - 1200) / 49
    EXPECT_LT(ev.p_value, 0.05);
  }
  EXPECT_TRUE(slope_evidence);
  // Slow alone but flat (an external call, tc08): no jam, and the slope that
  // says so is in the evidence.
  const NodeResult flat = evaluate(flat_slow.path(), "traffic_jam");
  EXPECT_EQ(flat.status, Status::kNotDetected);
  ASSERT_FALSE(flat.evidence.empty());
  const Evidence& slope = flat.evidence.back();
  EXPECT_NE(slope.test.find("slope"), std::string::npos) << slope.test;
  EXPECT_FALSE(slope.values.at("significant").get<bool>());
  EXPECT_LT(std::abs(slope.effect_size), 5);  // ms per user (the growing one: > 40)
  EXPECT_NE(slope.detail.find("does not get slower with load"), std::string::npos) << slope.detail;
  EXPECT_EQ(evaluate_with(grows.path(), "traffic_jam", {{"min_slope_ms_per_user", 100}}).status,
            Status::kNotDetected);
}

// Scenario tc20: a saturated message loop; the response time rises into
// 9 users and then stays on a plateau (276 -> 263 ms), so the t-test chain
// breaks at the last step; the slope over the users still finds the jam.
// The ledger's l11 with --quick: every request waits ~42 ms for a delayed
// ACK, alone and under load; the means rise by a sliver from step to step
// (41.8 -> 42.5 -> 43.3 ms), significant because a stall varies little.
// A service that violates alone is judged by its slope and its minimum
// (1 ms per user), not by the chain, which has no effect-size floor.
TEST(TrafficJam, AFlatStallThatViolatesAloneIsNoJamThoughItsMeansCreepUp) {
  TempDir creep;
  write_scaling(creep.path(), {41.8, 42.1, 42.5, 42.9, 43.3}, {"response_time"}, 0.4);
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
  write_scaling(plateau.path(), {100, 1100, 2000, 2800, 2700});
  NodeResult r = evaluate(plateau.path(), "traffic_jam");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_FALSE(r.evidence.empty());
  // Fine alone: the evidence says where it violates.
  EXPECT_NE(r.evidence.back().detail.find("violates its requirement under load"), std::string::npos)
      << r.evidence.back().detail;
  EXPECT_EQ(evaluate_with(plateau.path(), "traffic_jam", {{"min_slope_ms_per_user", 1000}}).status,
            Status::kNotDetected);
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
  write_scaling(olb.path(), {100, 300, 700, 1200, 2000}, {"response_time", "cpu"});
  write_scaling(cpu_bound.path(), {100, 105, 110, 115, 120}, {"response_time", "cpu"});
  write_scaling(no_cpu.path(), {100, 300, 700, 1200, 2000});
  for (int k = 0; k < 5; ++k) {
    write_cpu(experiment_dir(olb.path(), "scaling-s" + std::to_string(k)), 0.2, 2);
    write_cpu(experiment_dir(cpu_bound.path(), "scaling-s" + std::to_string(k)), 0.2 + 0.15 * k, 2);
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

// Alg. 15 per node: the database server is a node of its own. Its CPU,
// saturated, explains waits that the application's idle CPU does not
// (scenarios tc11, tc14); the same waits beside an idle server are a bridge.
TEST(OneLaneBridge, ASaturatedDatabaseServerExplainsTheWait) {
  TempDir saturated, idle;
  for (const TempDir* d : {&saturated, &idle})
    write_scaling(d->path(), {100, 300, 700, 1200, 2000}, {"response_time", "cpu", "database"});
  const double server_cores[] = {0.3, 0.9, 0.97, 0.99, 1.0};  // of its one CPU
  const int instants = 159;  // every 100 ms of the 16 s stable phase
  for (int k = 0; k < 5; ++k) {
    for (const TempDir* d : {&saturated, &idle}) {
      const std::string dir = experiment_dir(d->path(), "scaling-s" + std::to_string(k));
      write_cpu(dir, 0.2, 2);
      write_server_samples(
          dir, d == &saturated ? server_cores[k] : 0.1, instants, [](int) { return 0; }, "", 1);
    }
  }
  const NodeResult r = evaluate(saturated.path(), "one_lane_bridge");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  const NodeResult bridge = evaluate(idle.path(), "one_lane_bridge");
  EXPECT_EQ(bridge.status, Status::kDetected) << bridge.reason;
  ASSERT_FALSE(bridge.evidence.empty());
  EXPECT_EQ(bridge.evidence[0].values["database_cpus"], 1);
  EXPECT_NE(bridge.evidence[0].detail.find("database server"), std::string::npos)
      << bridge.evidence[0].detail;
  // A server at 60% whose CPU time per request (32 ms) queues 53 ms at
  // most: 200 ms is a bridge (tc15). With rho_s (100 ms) as its demand, as
  // the thesis approximates it, the node would explain up to 265 ms.
  TempDir moderate;
  write_scaling(moderate.path(), {100, 200, 200, 200, 200}, {"response_time", "cpu", "database"});
  for (int k = 0; k < 5; ++k) {
    const std::string dir = experiment_dir(moderate.path(), "scaling-s" + std::to_string(k));
    write_cpu(dir, 0.2, 2);
    write_server_samples(
        dir, 0.6, instants, [](int) { return 0; }, "", 1);
  }
  const NodeResult lock = evaluate(moderate.path(), "one_lane_bridge");
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
    const NodeResult r = evaluate(d.path(), "one_lane_bridge");
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
  write_scaling(hair.path(), {100, 106, 106, 106, 106}, {"response_time", "cpu"}, 40);
  write_scaling(far.path(), {100, 160, 160, 160, 160}, {"response_time", "cpu"});
  write_scaling(busy.path(), {100, 600, 600, 600, 600}, {"response_time", "cpu"});
  std::vector<double> busy_cpu(100);
  for (size_t t = 0; t < busy_cpu.size(); ++t) busy_cpu[t] = t < 50 ? 0.7 : 1.0;
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    write_cpu(experiment_dir(hair.path(), id), 0.2, 2);
    write_cpu(experiment_dir(far.path(), id), 0.2, 2);
    write_cpu_series(experiment_dir(busy.path(), id), busy_cpu);
  }
  const NodeResult noise = evaluate(hair.path(), "one_lane_bridge");
  EXPECT_EQ(noise.status, Status::kNotDetected);
  int above = 0;  // loaded steps whose mean is above the threshold: the t-test decided
  for (const auto& p : noise.charts["queueing"][0]["points"])
    above += p["measured"].get<double>() > p["threshold"].get<double>();
  EXPECT_GE(above, 1);
  const NodeResult bridge = evaluate(far.path(), "one_lane_bridge");
  EXPECT_EQ(bridge.status, Status::kDetected) << bridge.reason;
  ASSERT_FALSE(bridge.evidence.empty());
  EXPECT_LT(bridge.evidence[0].p_value, 0.05);
  EXPECT_EQ(evaluate(busy.path(), "one_lane_bridge").status, Status::kNotDetected);
  EXPECT_EQ(evaluate_with(busy.path(), "one_lane_bridge", {{"utilization_bound", 0}}).status,
            Status::kDetected);
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
    write_scaling(d.path(), {100, 240, 240, 240, 240}, {"response_time", "cpu"});
    std::vector<double> series(100);
    for (size_t t = 0; t < series.size(); ++t)
      series[t] = (blocks ? t < 50 : t % 2 == 0) ? 0.55 : 0.85;
    for (int k = 0; k < 5; ++k)
      write_cpu_series(experiment_dir(d.path(), "scaling-s" + std::to_string(k)), series);
    const NodeResult r = evaluate(d.path(), "one_lane_bridge");
    EXPECT_EQ(r.status, blocks ? Status::kNotDetected : Status::kDetected) << r.reason;
    const auto& point = r.charts["queueing"][0]["points"][0];
    EXPECT_NEAR(point["utilization"].get<double>(), 0.7, 1e-9);
    EXPECT_NEAR(point["utilization_bound"].get<double>(), blocks ? 0.79 : 0.7, 0.01);
    EXPECT_EQ(evaluate_with(d.path(), "one_lane_bridge", {{"utilization_bound", 0}}).status,
              Status::kDetected);
  }
}

// Scenario tc15: a service of 4 ms alone that waits 17 ms at 12 users for a
// table lock, the CPU at a quarter. The thesis' floor of 15 ms for the
// single-user time hid it; sonde has no floor.
TEST(OneLaneBridge, AShortServiceThatWaitsFourTimesLongerIsABridge) {
  TempDir d;
  write_scaling(d.path(), {4.4, 5, 6, 10.7, 16.9}, {"response_time", "cpu"});
  for (int k = 0; k < 5; ++k)
    write_cpu(experiment_dir(d.path(), "scaling-s" + std::to_string(k)), 0.26, 1);
  EXPECT_EQ(evaluate(d.path(), "one_lane_bridge").status, Status::kDetected);
  EXPECT_EQ(evaluate_with(d.path(), "one_lane_bridge", {{"single_user_floor_ms", 15}}).status,
            Status::kNotDetected);
}

// Run shop-full-1's tc10 and tc15 (2026-11-28). tc10: a CPU-bound service
// 6% above the threshold at 3 users, with small per-request errors, while
// its single-user mean varied by 0.33 ms between the run's single-user
// experiments: no bridge, as the threshold itself is that uncertain. tc15:
// a 2.8-ms service waiting for a table lock, 7.05 ms at 12 users against
// 3.8 ms that queueing explains: a bridge however the single-user mean
// varies. Both carry the same run-to-run noise (six single-user
// experiments, 6.0-6.8 ms); the per-request test alone (noise_test 0)
// calls the first a bridge too.
TEST(OneLaneBridge, AnExcessWithinTheSingleUserMeansNoiseIsNoBridge) {
  for (const bool lock : {false, true}) {
    TempDir d;
    const std::vector<double> loaded = lock ? std::vector<double>{6.06, 6.2, 7.0, 10.0, 13.0}
                                            : std::vector<double>{6.06, 6.79, 7.34, 8.07, 9.38};
    write_scaling(d.path(), loaded, {"response_time", "cpu"}, 0.6);
    const double utilization[] = {0.1, 0.22, 0.37, 0.5, 0.64};
    for (int k = 0; k < 5; ++k)
      write_cpu(experiment_dir(d.path(), "scaling-s" + std::to_string(k)), utilization[k], 2);
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
    const NodeResult r = evaluate(d.path(), "one_lane_bridge");
    EXPECT_EQ(r.status, lock ? Status::kDetected : Status::kNotDetected) << r.reason;
    EXPECT_EQ(evaluate_with(d.path(), "one_lane_bridge", {{"noise_test", 0}}).status,
              Status::kDetected);
  }
}

TEST(OneLaneBridge, NetworkBoundSystemIsNotAnOlb) {
  // Thesis TC19/TC20: idle CPU, response times beyond the queueing threshold,
  // but the message throughput stagnates while the sends slow down with
  // the load and take 40% of the response time: the network is the limit.
  // The same stagnation with sends of 5 us is a bridge holding everything,
  // messages included (scenario tc21, quick).
  // Scenario tc19: the throughput may grow into saturation over two steps
  // beyond the threshold (+11%) before it stays flat.
  TempDir d, idle_messaging, grows_into, wanders;
  const std::vector<double> rts = {100, 300, 700, 1200, 2000};
  for (const TempDir* dir : {&d, &idle_messaging, &grows_into, &wanders})
    write_scaling(dir->path(), rts, {"response_time", "cpu", "messaging"});
  for (int k = 0; k < 5; ++k)
    for (const TempDir* t : {&d, &idle_messaging, &grows_into, &wanders}) {
      const std::string dir = experiment_dir(t->path(), "scaling-s" + std::to_string(k));
      // 0.12 x the response time per send, 1000 sends per 300 requests.
      const double send_ns =
          t == &idle_messaging ? 5'000 : 0.12 * rts[static_cast<size_t>(k)] * 1e6;
      write_log(dir, [&](format::RecordSink& sink) {
        const format::RecordSchema* cpu =
            format::find_builtin_schema("kieker.common.record.system.CPUUtilizationRecord");
        format::Record r;
        format::reset_to_defaults(r, cpu);
        r.values[static_cast<size_t>(cpu->field_index("timestamp"))] = kT0 + kMs;
        r.values[static_cast<size_t>(cpu->field_index("totalUtilization"))] = 0.2;
        sink.on_record(r);
        int messages = k == 0 ? 100 : 1000;  // stagnates from the second step on
        if (t == &grows_into && k == 1) messages = 900;
        // tc20: a saturated broker's throughput wanders below its best.
        if (t == &wanders && k >= 1) messages = std::vector<int>{0, 1000, 860, 760, 990}[k];
        for (int i = 0; i < messages; ++i) {
          format::Record m;
          format::reset_to_defaults(m, &message_send_schema());
          m.values[0] = kT0 + i * kMs;
          m.values[3] = static_cast<int64_t>(send_ns * (0.8 + 0.05 * (i % 9)));
          m.values[4] = std::string_view("orders");
          sink.on_record(m);
        }
      });
    }
  const NodeResult r = evaluate(d.path(), "one_lane_bridge");
  EXPECT_EQ(r.status, Status::kNotDetected);
  EXPECT_NE(r.reason.find("stagnates"), std::string::npos) << r.reason;
  const NodeResult bridge = evaluate(idle_messaging.path(), "one_lane_bridge");
  EXPECT_EQ(bridge.status, Status::kDetected) << bridge.reason;
  const NodeResult late = evaluate(grows_into.path(), "one_lane_bridge");
  EXPECT_EQ(late.status, Status::kNotDetected);
  EXPECT_NE(late.reason.find("stagnates"), std::string::npos) << late.reason;
  const NodeResult wandering = evaluate(wanders.path(), "one_lane_bridge");
  EXPECT_EQ(wandering.status, Status::kNotDetected);
  EXPECT_NE(wandering.reason.find("stagnates"), std::string::npos) << wandering.reason;
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

TEST(DispensableSynchronization, LockWaitGrowingWithLoad) {
  TempDir grows, flat, no_probe;
  for (auto* d : {&grows, &flat})
    write_scaling(d->path(), {100, 300, 700, 1200, 2000}, {"response_time", "lock_wait"});
  write_scaling(no_probe.path(), {100, 300, 700, 1200, 2000});
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    // Every step is a new process: the same mutex has another address.
    const std::string lock = "0x7ffc0000" + std::to_string(10 + k);
    write_lock_waits(experiment_dir(grows.path(), id), 1 + 100.0 * k, lock);
    write_lock_waits(experiment_dir(flat.path(), id), 1, lock);
  }
  const NodeResult r = evaluate(grows.path(), "dispensable_synchronization");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_EQ(r.evidence[0].location, "lock site Cart::add");
  EXPECT_NE(r.evidence[0].values["locks"].get<std::string>().find("0x7ffc000014"),
            std::string::npos);
  EXPECT_EQ(evaluate(flat.path(), "dispensable_synchronization").status, Status::kNotDetected);
  EXPECT_EQ(evaluate(no_probe.path(), "dispensable_synchronization").status, Status::kNotEvaluated);
}

TEST(DispensableSynchronization, WaitsAppearingUnderLoadAreGrowth) {
  // One user never waits (an uncontended lock writes nothing); from the
  // second step on, requests queue for the lock, longer and longer.
  TempDir appears, too_few;
  for (auto* d : {&appears, &too_few})
    write_scaling(d->path(), {100, 300, 700, 1200, 2000}, {"response_time", "lock_wait"});
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    const std::string lock = "0x7ffc0000" + std::to_string(10 + k);
    write_lock_waits(experiment_dir(appears.path(), id), 1 + 100.0 * k, lock, k == 0 ? 0 : 200);
    // Three waits at the second load are not enough to call it growth.
    write_lock_waits(experiment_dir(too_few.path(), id), 1 + 100.0 * k, lock,
                     k == 0 ? 0 : (k == 1 ? 3 : 200));
  }
  const NodeResult r = evaluate(appears.path(), "dispensable_synchronization");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 4u);
  EXPECT_NE(r.evidence[0].test.find("appearance"), std::string::npos) << r.evidence[0].test;
  EXPECT_EQ(r.evidence[0].values["n_after"], 200);
  EXPECT_NE(r.evidence[1].test.find("Welch"), std::string::npos) << r.evidence[1].test;
  EXPECT_EQ(evaluate(too_few.path(), "dispensable_synchronization").status, Status::kNotDetected);
}

void write_db_calls(const std::string& dir, int traces,
                    const std::function<std::string(int, int)>& sql, int per_trace, double ms) {
  write_log(dir, [&](format::RecordSink& sink) {
    const format::RecordSchema* schema = format::find_builtin_schema("sonde.record.DatabaseCall");
    for (int t = 0; t < traces; ++t) {
      for (int q = 0; q < per_trace; ++q) {
        format::Record r;
        format::reset_to_defaults(r, schema);
        const std::string text = sql(t, q);
        r.values[0] = kT0 + (t * per_trace + q) * kMs;
        r.values[1] = int64_t{t};
        r.values[3] = static_cast<int64_t>(ms * 1e6);
        r.values[4] = std::string_view(text);
        sink.on_record(r);
      }
    }
  });
}

TEST(TheStifle, SameStatementRepeatedWithinRequests) {
  TempDir stifle, distinct;
  for (auto* d : {&stifle, &distinct}) {
    ExperimentSpec s;
    s.id = "single";
    s.kind = "single_user";
    s.users = 1;
    s.requests = 20;
    s.probes = {"response_time", "database"};
    write_experiment(d->path(), s);
  }
  write_db_calls(
      experiment_dir(stifle.path(), "single"), 20,
      [](int, int q) { return "SELECT * FROM item WHERE id = " + std::to_string(q); }, 10, 2);
  write_db_calls(
      experiment_dir(distinct.path(), "single"), 20,
      [](int, int q) { return "SELECT * FROM table" + std::to_string(q) + " WHERE id = 1"; }, 10,
      2);
  const NodeResult r = evaluate(stifle.path(), "the_stifle");
  EXPECT_EQ(r.status, Status::kDetected);
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].location, "SELECT * FROM item WHERE id = ?");
  EXPECT_EQ(r.evidence[0].values["max_repetitions"], 10);
  EXPECT_EQ(evaluate(distinct.path(), "the_stifle").status, Status::kNotDetected);
}

// Repetitions that cost almost nothing (4 inserts of 0.01 ms in a 50 ms
// request: 0.08%) are not a finding by default; min_time_share 0 (the
// thesis) reports them.
TEST(TheStifle, NegligibleRepetitionsAreNotReported) {
  TempDir d;
  ExperimentSpec s;
  s.id = "single";
  s.kind = "single_user";
  s.users = 1;
  s.requests = 20;
  s.probes = {"response_time", "database"};
  s.response_ms = [](int, const std::string&) { return 50.0; };
  write_experiment(d.path(), s);
  write_db_calls(
      experiment_dir(d.path(), "single"), 20,
      [](int, int q) { return "INSERT INTO line VALUES (" + std::to_string(q) + ")"; }, 4, 0.01);
  const NodeResult r = evaluate(d.path(), "the_stifle");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  // The repetition it found stays in the evidence, not as a finding: 20
  // requests x 4 inserts of 0.01 ms over 20 requests' response times.
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_FALSE(r.evidence[0].values.at("found").get<bool>());
  EXPECT_EQ(r.evidence[0].values.at("requests"), 20);
  EXPECT_EQ(r.evidence[0].values.at("max_repetitions"), 4);
  const ExperimentData written = load_experiment_data(d.path());
  double total_rt = 0;
  for (const Request& q : written.experiments.at(0).requests) total_rt += q.response_ms();
  EXPECT_NEAR(r.evidence[0].effect_size, 20 * 4 * 0.01 / total_rt, 1e-9);
  EXPECT_NE(r.reason.find("under 1"), std::string::npos) << r.reason;
  const ExperimentData data = load_experiment_data(d.path());
  Settings settings;
  const Heuristic& h = *heuristic_registry().at("the_stifle");
  Context ctx{data, settings, h.defaults(), {}};
  ctx.params["min_time_share"] = 0;
  nlohmann::json shared;
  EXPECT_EQ(h.evaluate(ctx, shared).status, Status::kDetected);
}

TEST(SqlShape, ReplacesLiteralsOnly) {
  using heuristics::sql_shape;
  EXPECT_EQ(sql_shape("SELECT  a1 FROM t WHERE x = 42 AND s = 'it''s'"),
            "SELECT a1 FROM t WHERE x = ? AND s = ?");
  EXPECT_EQ(sql_shape("select * from t2 where v > 1.5e3"), "select * from t2 where v > ?");
}

// A statement built for the rows at hand has one shape for any number of
// rows from two on.
TEST(SqlShape, ListsOfValuesOfAnyLengthHaveOneShape) {
  using heuristics::sql_shape;
  EXPECT_EQ(sql_shape("SELECT * FROM t WHERE id IN (1, 2, 3)"),
            "SELECT * FROM t WHERE id IN (?, ...)");
  EXPECT_EQ(sql_shape("SELECT * FROM t WHERE id IN (1, 2, 3)"),
            sql_shape("SELECT * FROM t WHERE id IN (7, 8)"));
  EXPECT_EQ(sql_shape("INSERT INTO l (a, b) VALUES ($1, $2), ($3, $4), ($5, $6)"),
            "INSERT INTO l (a, b) VALUES ($?, ...), ...");
  EXPECT_EQ(sql_shape("INSERT INTO l (a, b) VALUES ($1, $2), ($3, $4)"),
            sql_shape("INSERT INTO l (a, b) VALUES ($1, $2), ($3, $4), ($5, $6), ($7, $8)"));
  EXPECT_EQ(sql_shape("UPDATE s SET q = q - CASE p WHEN $1 THEN CAST($2 AS INTEGER) WHEN $3 THEN "
                      "CAST($4 AS INTEGER) END WHERE p IN ($5, $6)"),
            "UPDATE s SET q = q - CASE p WHEN $? THEN CAST($? AS INTEGER) ... END WHERE p IN ($?, "
            "...)");
  // Not lists: different columns, nested parentheses, a single value.
  EXPECT_EQ(sql_shape("SELECT a, b FROM t WHERE x = 1 AND y = 2"),
            "SELECT a, b FROM t WHERE x = ? AND y = ?");
  EXPECT_EQ(sql_shape("SELECT ((a)) FROM t WHERE id IN (4)"),
            "SELECT ((a)) FROM t WHERE id IN (?)");
  EXPECT_NE(sql_shape("SELECT * FROM t WHERE id = 1"), sql_shape("SELECT * FROM u WHERE id = 1"));
}

// Without their data (here: a load test with response times only) they
// report not_evaluated, never not_detected.
TEST(CongestionBlobTrucks, ReportNotEvaluatedWithoutTheirData) {
  TempDir d;
  write_experiment(d.path(), load_test([](int, const std::string&) { return 100; }));
  for (const char* name : {"database_congestion", "the_blob", "empty_semi_trucks"}) {
    const NodeResult r = evaluate(d.path(), name);
    EXPECT_EQ(r.status, Status::kNotEvaluated) << name;
    EXPECT_FALSE(heuristic_registry().at(name)->needs().empty());
  }
}

}  // namespace
}  // namespace sonde::diagnose::test
