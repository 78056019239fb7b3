// Dispensable Synchronization, The Stifle (and its SQL shapes), and the
// nodes that report not_evaluated without their data, on synthetic
// experiment data: detected when the pattern is planted, not detected when it is absent,
// not_evaluated when its data is missing. Patterns are far from the decision
// boundaries, so the outcome follows from the planted parameters, not from
// the seeded noise.
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

TEST(DispensableSynchronization, LockWaitGrowingWithLoad) {
  TempDir grows, flat, no_probe;
  for (auto* d : {&grows, &flat})
    write_scaling_series(d->path(), {100, 300, 700, 1200, 2000}, {"response_time", "lock_wait"});
  write_scaling_series(no_probe.path(), {100, 300, 700, 1200, 2000});
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    // Every step is a new process: the same mutex has another address.
    const std::string lock = "0x7ffc0000" + std::to_string(10 + k);
    write_lock_waits(experiment_path(grows.path(), id), 1 + 100.0 * k, lock);
    write_lock_waits(experiment_path(flat.path(), id), 1, lock);
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
    write_scaling_series(d->path(), {100, 300, 700, 1200, 2000}, {"response_time", "lock_wait"});
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    const std::string lock = "0x7ffc0000" + std::to_string(10 + k);
    write_lock_waits(experiment_path(appears.path(), id), 1 + 100.0 * k, lock, k == 0 ? 0 : 200);
    // Three waits at the second load are not enough to call it growth.
    write_lock_waits(experiment_path(too_few.path(), id), 1 + 100.0 * k, lock,
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

// The single-user test The Stifle reads: 20 requests, traces and calls.
ExperimentSpec stifle_single_user() {
  ExperimentSpec s;
  s.id = "single";
  s.kind = "single_user";
  s.users = 1;
  s.requests = 20;
  s.probes = {"response_time", "database"};
  return s;
}

TEST(TheStifle, SameStatementRepeatedWithinRequests) {
  TempDir stifle, distinct;
  for (auto* d : {&stifle, &distinct}) write_experiment(d->path(), stifle_single_user());
  write_db_calls(
      experiment_path(stifle.path(), "single"), 20,
      [](int, int q) { return "SELECT * FROM item WHERE id = " + std::to_string(q); }, 10, 2);
  write_db_calls(
      experiment_path(distinct.path(), "single"), 20,
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
// request: batching them saves 0.06%) are not a finding: the single-user
// mean's own noise (5% per request) is larger than what the fix could be
// seen to save. The same inserts at 2 ms each (batching saves 12%) are.
TEST(TheStifle, RepetitionsWhoseSavingNoiseWouldHideAreNotReported) {
  TempDir cheap, costly;
  for (const TempDir* d : {&cheap, &costly}) {
    ExperimentSpec s = stifle_single_user();
    s.response_ms = [](int, const std::string&) { return 50.0; };
    write_experiment(d->path(), s);
  }
  const auto insert = [](int, int q) {
    return "INSERT INTO line VALUES (" + std::to_string(q) + ")";
  };
  write_db_calls(experiment_path(cheap.path(), "single"), 20, insert, 4, 0.01);
  write_db_calls(experiment_path(costly.path(), "single"), 20, insert, 4, 2);
  const NodeResult r = evaluate(cheap.path(), "the_stifle");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  // The repetition it found stays in the evidence, not as a finding: 20
  // requests x 4 inserts of 0.01 ms over 20 requests' response times.
  ASSERT_EQ(r.evidence.size(), 1u);
  const Evidence& ev = r.evidence[0];
  EXPECT_FALSE(ev.values.at("found").get<bool>());
  EXPECT_EQ(ev.values.at("requests"), 20);
  EXPECT_EQ(ev.values.at("max_repetitions"), 4);
  const ExperimentData written = load_experiment_data(cheap.path());
  double total_rt = 0;
  for (const Request& q : written.experiments.at(0).requests) total_rt += q.response_ms();
  EXPECT_NEAR(ev.effect_size, 20 * 4 * 0.01 / total_rt, 1e-9);
  // One call instead of four saves three quarters of their time.
  EXPECT_NEAR(ev.values.at("saving_share").get<double>(), 20 * 3 * 0.01 / total_rt, 1e-9);
  EXPECT_GT(ev.values.at("min_saving_share").get<double>(),
            ev.values.at("saving_share").get<double>());
  EXPECT_NE(r.reason.find("measurement error"), std::string::npos) << r.reason;
  const NodeResult c = evaluate(costly.path(), "the_stifle");
  EXPECT_EQ(c.status, Status::kDetected) << c.reason;
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_GT(c.evidence[0].values.at("saving_share").get<double>(),
            c.evidence[0].values.at("min_saving_share").get<double>());
}

// One loop that issues five statements per row (ten rows per request) is
// batched as one, by a join: its saving is the five together. Each
// statement alone saves less than the single-user mean's noise allows to
// confirm (100 requests of 50 ms +- 5: about 1.3% of the response time;
// each saves about 0.7%), the five together over twice that, so the loop
// is a finding. The same statements repeated 8, 9, 10, 11 and 12 times per
// request are no loop: each is judged on its own and none is a finding.
TEST(TheStifle, StatementsOneLoopRepeatsEquallyOftenAreJudgedTogether) {
  TempDir loop, apart;
  for (const TempDir* d : {&loop, &apart}) {
    ExperimentSpec s = stifle_single_user();
    s.requests = 100;
    s.response_ms = [](int, const std::string&) { return 50.0; };
    write_experiment(d->path(), s);
  }
  const auto statement = [](int k, int row) {
    return "SELECT * FROM part" + std::to_string(k) + " WHERE id = " + std::to_string(row);
  };
  write_db_calls(
      experiment_path(loop.path(), "single"), 100,
      [&](int, int q) { return statement(q % 5, q / 5); }, 50, 0.04);
  // Calls 0-7 are statement 0, 8-16 statement 1, ... 38-49 statement 4.
  write_db_calls(
      experiment_path(apart.path(), "single"), 100,
      [&](int, int q) {
        int k = 0;
        for (int end = 8; q >= end; end += 8 + k) ++k;
        return statement(k, q);
      },
      50, 0.04);
  const NodeResult r = evaluate(loop.path(), "the_stifle");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_EQ(r.evidence.size(), 1u);
  const Evidence& ev = r.evidence[0];
  EXPECT_EQ(ev.values.at("statements").size(), 5u);
  EXPECT_EQ(ev.values.at("mean_repetitions"), 10);
  EXPECT_EQ(ev.location.find("SELECT * FROM part"), 0u) << ev.location;
  EXPECT_EQ(std::count(ev.location.begin(), ev.location.end(), ';'), 4) << ev.location;
  const ExperimentData written = load_experiment_data(loop.path());
  double total_rt = 0;
  for (const Request& q : written.experiments.at(0).requests) total_rt += q.response_ms();
  // Ten calls into one saves nine tenths: 100 requests x 5 statements x 9 x 0.04 ms.
  const double saving = 100 * 5 * 9 * 0.04 / total_rt;
  EXPECT_NEAR(ev.values.at("saving_share").get<double>(), saving, 1e-9);
  const double bound = ev.values.at("min_saving_share").get<double>();
  EXPECT_LT(saving / 5, bound);
  EXPECT_GT(saving, 2 * bound);
  EXPECT_NE(r.reason.find("5 statement(s)"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("1 loop(s)"), std::string::npos) << r.reason;

  const NodeResult a = evaluate(apart.path(), "the_stifle");
  EXPECT_EQ(a.status, Status::kNotDetected) << a.reason;
  ASSERT_EQ(a.evidence.size(), 5u);
  for (const Evidence& one : a.evidence) {
    EXPECT_EQ(one.values.at("statements").size(), 1u) << one.location;
    EXPECT_FALSE(one.values.at("found").get<bool>()) << one.location;
  }
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
  write_experiment(d.path(), load_test_spec([](int, const std::string&) { return 100; }));
  for (const char* name : {"database_congestion", "the_blob", "empty_semi_trucks"}) {
    const NodeResult r = evaluate(d.path(), name);
    EXPECT_EQ(r.status, Status::kNotEvaluated) << name;
    EXPECT_FALSE(heuristic_registry().at(name)->needs().empty());
  }
}

}  // namespace
}  // namespace sonde::diagnose::test
