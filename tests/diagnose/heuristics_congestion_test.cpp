// Database Congestion on constructed experiment data: it must detect the
// planted problem, must not detect the thesis' negative cases for it, and
// reports not_evaluated when its data is missing. Expected figures are
// computed from the planted parameters. Also the two input bugs: exact
// 64-bit trace ids, and the CPU sampler's aggregate "all" record not
// counted as a core.
// About 500 lines: Database Congestion has three rules (server CPU,
// locks, in-process calls), each with its positive and negative cases on
// the same constructed series; the in-process rule's are in
// heuristics_embedded_db_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose_test_support.hpp"
#include "format/record.hpp"
#include "format/schema.hpp"

namespace sonde::diagnose::test {
namespace {

// ---- shared writers (names prefixed: unity batches share a scope) ----

constexpr int kCbeRequests = 300;
constexpr int64_t kCbeInterNs = 20 * kMs;
// write_experiment's stable phase: the requests plus 10 s.
constexpr double kCbeDurationMs = kCbeRequests * 20.0 + 10'000.0;
// libsonde-like trace ids: a random high half, neighbours 1 apart (exact int64 needed).
constexpr int64_t kCbeTraceBase = 0x5a3c'9e11'0000'0001;

void cbe_scaling(const TempDir& d, const std::vector<std::string>& probes,
                 const std::vector<double>& rt = {100, 300, 700, 1200, 2000}) {
  for (int k = 0; k < 5; ++k) {
    ExperimentSpec s = scaling_step(k, probes);
    s.requests = kCbeRequests;
    s.inter_request_ns = kCbeInterNs;
    const double v = rt[static_cast<size_t>(k)];
    s.response_ms = [v](int, const std::string&) { return v; };
    s.noise_ms = std::min(5.0, 0.05 * v);  // +- 5 ms, less for fast services
    write_experiment(d.path(), s, 7 + static_cast<uint64_t>(k));
  }
}

struct CbeStatement {
  std::string sql;
  int calls = 0;
  double ms = 0;  // duration of each (with a 2% spread so t-tests have variance)
};

// DatabaseCall records and CPU records (per core "cpuN" plus the sampler's
// aggregate "all", as libsonde's CPU sampler writes them).
void cbe_db_cpu_log(const std::string& dir, const std::vector<CbeStatement>& statements, double cpu,
                    int cores) {
  write_log(dir, [&](format::RecordSink& sink) {
    const format::RecordSchema* db = format::find_builtin_schema("sonde.record.DatabaseCall");
    int64_t i = 0;
    for (const CbeStatement& st : statements) {
      for (int c = 0; c < st.calls; ++c, ++i) {
        format::Record r;
        format::reset_to_defaults(r, db);
        const std::string text = st.sql;
        r.values[0] = kT0 + i * kMs;
        r.values[1] = int64_t{i};
        r.values[3] = static_cast<int64_t>(st.ms * (1 + (c % 5 - 2) * 0.01) * 1e6);
        r.values[4] = std::string_view(text);
        sink.on_record(r);
      }
    }
    const format::RecordSchema* schema =
        format::find_builtin_schema(format::kieker_class::kCpuUtilization);
    for (int t = 0; t < 10; ++t) {
      for (int c = -1; c < cores; ++c) {
        format::Record r;
        format::reset_to_defaults(r, schema);
        const std::string id = c < 0 ? "all" : "cpu" + std::to_string(c);
        r.values[static_cast<size_t>(schema->field_index("timestamp"))] = kT0 + t * 100 * kMs;
        r.values[static_cast<size_t>(schema->field_index("hostname"))] = std::string_view("node1");
        r.values[static_cast<size_t>(schema->field_index("cpuID"))] = std::string_view(id);
        r.values[static_cast<size_t>(schema->field_index("totalUtilization"))] = cpu;
        sink.on_record(r);
      }
    }
  });
}

NodeResult cbe_evaluate_under(const TempDir& d, const std::string& heuristic,
                              const nlohmann::json& violating_users) {
  const ExperimentData data = load_experiment_data(d.path());
  Settings settings;
  std::map<std::string, nlohmann::json> ancestors = {
      {"traffic_jam", {{"violating_users", violating_users}}}};
  const Heuristic& h = *heuristic_registry().at(heuristic);
  Context ctx{data, settings, h.defaults(), ancestors};
  nlohmann::json shared = nlohmann::json::object();
  return h.evaluate(ctx, shared);
}

// The rows behind a finding: a heuristic also keeps the rows it checked
// and found within limits (values.found false), so a reader sees why.
std::vector<Evidence> cbe_found(const NodeResult& r) {
  std::vector<Evidence> out;
  for (const Evidence& ev : r.evidence)
    if (!ev.values.contains("found") || ev.values.at("found").get<bool>()) out.push_back(ev);
  return out;
}

int cbe_rows_at(const NodeResult& r, const std::string& location) {
  int n = 0;
  for (const Evidence& ev : r.evidence) n += ev.location == location;
  return n;
}
// ---- input bugs ----

TEST(CpuRecords, TheAggregateAllRecordIsNotACore) {
  TempDir d;
  ExperimentSpec s;
  s.id = "load-u4";
  s.probes = {"response_time", "cpu"};
  write_experiment(d.path(), s);
  cbe_db_cpu_log(experiment_path(d.path(), "load-u4"), {}, 0.4, 2);
  const ExperimentData data = load_experiment_data(d.path());
  double u = 0;
  int cores = 0;
  std::string error;
  ASSERT_TRUE(heuristics::cpu_utilization(data.experiments[0], &u, &cores, &error)) << error;
  EXPECT_EQ(cores, 2) << "cpu0 and cpu1; 'all' is their aggregate";
  EXPECT_DOUBLE_EQ(u, 0.4);
}

TEST(CpuRecords, APinnedSutCountsOnlyItsOwnCpus) {
  // cpu0 busy (the SUT's, sut.cpus "0"), cpu1 nearly idle (a database
  // pinned elsewhere would be there): the machine's average says 50%.
  TempDir d;
  ExperimentSpec s;
  s.id = "load-u4";
  s.probes = {"response_time", "cpu"};
  write_experiment(d.path(), s);
  const std::string dir = experiment_path(d.path(), "load-u4");
  write_log(dir, [&](format::RecordSink& sink) {
    const format::RecordSchema* schema =
        format::find_builtin_schema(format::kieker_class::kCpuUtilization);
    for (int t = 0; t < 10; ++t) {
      for (const auto& [id, u] : {std::pair{"all", 0.5}, {"cpu0", 0.9}, {"cpu1", 0.1}}) {
        format::Record r;
        format::reset_to_defaults(r, schema);
        r.values[static_cast<size_t>(schema->field_index("timestamp"))] = kT0 + t * 100 * kMs;
        r.values[static_cast<size_t>(schema->field_index("hostname"))] = std::string_view("node1");
        r.values[static_cast<size_t>(schema->field_index("cpuID"))] = std::string_view(id);
        r.values[static_cast<size_t>(schema->field_index("totalUtilization"))] = u;
        sink.on_record(r);
      }
    }
  });
  auto measure = [&](double* u, int* cores) {
    std::string error;
    const ExperimentData data = load_experiment_data(d.path());
    EXPECT_TRUE(heuristics::cpu_utilization(data.experiments[0], u, cores, &error)) << error;
  };
  double u = 0;
  int cores = 0;
  measure(&u, &cores);
  EXPECT_EQ(cores, 2);
  EXPECT_DOUBLE_EQ(u, 0.5);
  nlohmann::json e;
  std::ifstream(dir + "/experiment.json") >> e;
  e["sut_cpus"] = {0};
  std::ofstream(dir + "/experiment.json") << e.dump(2);
  measure(&u, &cores);
  EXPECT_EQ(cores, 1);
  EXPECT_DOUBLE_EQ(u, 0.9);
  e["sut_cpus"] = {7};  // no records of that CPU: an error naming it, not 0%
  std::ofstream(dir + "/experiment.json") << e.dump(2);
  const ExperimentData data = load_experiment_data(d.path());
  std::string error;
  EXPECT_FALSE(heuristics::cpu_utilization(data.experiments[0], &u, &cores, &error));
  EXPECT_NE(error.find("sut_cpus"), std::string::npos) << error;
}

// A load test "load-u4" with the messaging probe in `root`; returns its folder.
std::string messaging_load_test(const std::string& root) {
  ExperimentSpec s;
  s.id = "load-u4";
  s.probes = {"response_time", "messaging"};
  write_experiment(root, s);
  return experiment_path(root, "load-u4");
}

// `n` MessageSend records to queue "q" into the experiment's log (replacing
// it), one ns apart from kT0 + 1, trace ids first_trace, first_trace + 1, …
void write_sends(const std::string& experiment_dir, int64_t n, int64_t first_trace) {
  write_log(experiment_dir, [&](format::RecordSink& sink) {
    for (int64_t i = 0; i < n; ++i) {
      format::Record r;
      format::reset_to_defaults(r, &message_send_schema());
      r.values[0] = kT0 + 1 + i;
      r.values[1] = first_trace + i;
      r.values[4] = std::string_view("q");
      sink.on_record(r);
    }
  });
}

TEST(LogRecords, SixtyFourBitTraceIdsAndTimestampsStayExact) {
  TempDir d;
  // libsonde's ids: a random high half; neighbours differ in the last bit,
  // which a double (53-bit mantissa) cannot hold at this magnitude.
  const int64_t base = 0x5a3c'9e11'0000'0001;
  write_sends(messaging_load_test(d.path()), 3, base);
  const ExperimentData data = load_experiment_data(d.path());
  const LogRecords& recs = log_records(data.experiments[0], "sonde.record.MessageSend");
  ASSERT_TRUE(recs.error.empty()) << recs.error;
  ASSERT_EQ(recs.records.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(recs.records[static_cast<size_t>(i)].trace_id, base + i);
    EXPECT_EQ(recs.records[static_cast<size_t>(i)].timestamp, kT0 + 1 + i);
  }
}

// Records are read once per experiment and class; forget_experiment drops
// them (the sensitivity re-evaluation does, one case at a time), so a
// second read sees the log as it is now.
TEST(LogRecords, ForgettingAnExperimentDropsItsCachedRecords) {
  TempDir d;
  const std::string dir = messaging_load_test(d.path());
  write_sends(dir, 3, 1);
  const ExperimentData data = load_experiment_data(d.path());
  const std::string cls = "sonde.record.MessageSend";
  EXPECT_EQ(log_records(data.experiments[0], cls).records.size(), 3u);
  write_sends(dir, 5, 1);
  EXPECT_EQ(log_records(data.experiments[0], cls).records.size(), 3u);  // cached
  forget_experiment(data.experiments[0]);
  EXPECT_EQ(log_records(data.experiments[0], cls).records.size(), 5u);
}

// ---- Database Congestion ----

TEST(DatabaseCongestion, DatabaseCallsSaturateTheCpu) {
  // Thesis TC11/TC14: database work saturates the CPU. Per step `calls`
  // calls of `ms` on 2 cores: busy share = calls * ms / (duration * 2).
  TempDir busy, app_cpu, idle;
  const std::vector<std::string> probes = {"response_time", "database", "cpu"};
  for (const TempDir* d : {&busy, &app_cpu, &idle}) cbe_scaling(*d, probes);
  const int calls = 400;
  const double heavy_ms = kCbeDurationMs * 2 / calls;  // busy share 1.0: all core time
  const double cpu[] = {0.2, 0.4, 0.6, 0.8, 0.95};
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    cbe_db_cpu_log(experiment_path(busy.path(), id),
                   {{"SELECT * FROM item WHERE title LIKE ?", calls, heavy_ms}}, cpu[k], 2);
    // TC10: the application burns the CPU, its queries are quick (1 ms).
    cbe_db_cpu_log(experiment_path(app_cpu.path(), id),
                   {{"SELECT * FROM item WHERE id = ?", calls, 1}}, cpu[k], 2);
    cbe_db_cpu_log(experiment_path(idle.path(), id),
                   {{"SELECT * FROM item WHERE title LIKE ?", calls, heavy_ms}}, 0.2, 2);
  }
  const double limit = 0.70710678;  // M/M/2: R = 2 D at u = 1/sqrt(2)
  const NodeResult r = evaluate(busy.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  // The steps above the limit: 0.8 and 0.95 (37 and 50 users).
  int expected = 0;
  for (double u : cpu) expected += u >= limit;
  const std::vector<Evidence> found = cbe_found(r);
  ASSERT_EQ(static_cast<int>(found.size()), expected);
  EXPECT_EQ(found[0].location, "database CPU");
  EXPECT_NEAR(found[0].values["threshold"].get<double>(), limit, 1e-3);
  EXPECT_EQ(found[0].values["cores"], 2);
  EXPECT_NEAR(found.back().effect_size, 0.95, 1e-9);
  EXPECT_TRUE(std::isnan(found[0].p_value));  // a threshold, not a test
  // Every violating load's CPU was checked (13..50 users): the two below
  // the limit are there too, not as findings.
  EXPECT_EQ(cbe_rows_at(r, "database CPU"), 4);

  const NodeResult cpu_app = evaluate(app_cpu.path(), "database_congestion");
  EXPECT_EQ(cpu_app.status, Status::kNotDetected) << cpu_app.reason;
  EXPECT_EQ(evaluate(idle.path(), "database_congestion").status, Status::kNotDetected);
}

TEST(DatabaseCongestion, LockWaitsPerLockGrowWithLoad) {
  // Thesis TC15 (locking DB calls, CPU idle) against TC12 (equal calls,
  // no lock waiting): BEGIN IMMEDIATE's duration is the wait for the lock.
  TempDir locking, flat, no_probe;
  cbe_scaling(locking, {"response_time", "database", "cpu"});
  cbe_scaling(flat, {"response_time", "database", "cpu"});
  cbe_scaling(no_probe, {"response_time", "cpu"});
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    // One wait per request, 60% of its response time under load
    // (100, 300, 700, 1200, 2000 ms).
    cbe_db_cpu_log(experiment_path(locking.path(), id),
                   {{"BEGIN IMMEDIATE", 300,
                     std::vector<double>{1, 180, 420, 720, 1200}[static_cast<size_t>(k)]},
                    {"UPDATE stock SET n = 3", 300, 1}},
                   0.15, 2);
    cbe_db_cpu_log(experiment_path(flat.path(), id),
                   {{"BEGIN IMMEDIATE", 200, 1}, {"SELECT name FROM product WHERE id = 4", 200, 1}},
                   0.15, 2);
    cbe_db_cpu_log(experiment_path(no_probe.path(), id), {}, 0.15, 2);
  }
  const NodeResult r = evaluate(locking.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  // The waits are most of the response time, so the in-process database's
  // rule 3 (time in database calls) finds it too; the lock rule's tests:
  std::vector<Evidence> found;
  for (const Evidence& ev : cbe_found(r))
    if (ev.location == "lock BEGIN IMMEDIATE") found.push_back(ev);
  ASSERT_EQ(found.size(), 4u) << "one t-test per step into 13, 25, 37, 50 users";
  for (const Evidence& ev : found) {
    EXPECT_LT(ev.p_value, 0.05);
    EXPECT_GT(ev.effect_size, 0);
  }
  // Under Traffic Jam only its violating loads count: still every one grows.
  EXPECT_EQ(cbe_evaluate_under(locking, "database_congestion", {37, 50}).status, Status::kDetected);
  EXPECT_EQ(evaluate(flat.path(), "database_congestion").status, Status::kNotDetected);
  const NodeResult missing = evaluate(no_probe.path(), "database_congestion");
  EXPECT_EQ(missing.status, Status::kNotEvaluated);
  EXPECT_NE(missing.reason.find("database probe"), std::string::npos) << missing.reason;
}

TEST(DatabaseCongestion, MeasuredServerCpuReplacesTheEstimate) {
  // A PostgreSQL server whose processes use `cores_used[k]` of 2 cores
  // during the samples; the statements alone would not reach the limit.
  TempDir d;
  cbe_scaling(d, {"response_time", "database", "cpu"});
  const double cores_used[] = {0.2, 0.5, 0.9, 1.6, 1.9};  // of 2: 0.8 and 0.95 over 0.707
  const int instants = static_cast<int>(kCbeDurationMs / 100) - 1;
  for (int k = 0; k < 5; ++k) {
    const std::string dir = experiment_path(d.path(), "scaling-s" + std::to_string(k));
    cbe_db_cpu_log(dir, {{"SELECT name FROM product WHERE id = $1", 100, 1}}, 0.97, 2);
    write_server_samples(dir, cores_used[k], instants, [](int) { return 0; });
  }
  const NodeResult r = evaluate(d.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  const std::vector<Evidence> found = cbe_found(r);
  ASSERT_EQ(found.size(), 2u) << "the steps at 37 and 50 users";
  // The samples cover all but the last 100 ms of the stable phase.
  const double covered = instants * 100.0 / kCbeDurationMs;
  EXPECT_NEAR(found[0].effect_size, 1.6 / 2 * covered, 1e-6);
  EXPECT_NE(found[0].test.find("database server CPU"), std::string::npos) << found[0].test;
  EXPECT_EQ(found[0].values["database_cpu_measured"], true);
  // A server database: the CPU rows of all four loads, no call-time rows.
  EXPECT_EQ(r.evidence.size(), 4u);
  EXPECT_EQ(cbe_rows_at(r, "database CPU"), 4);
}

TEST(DatabaseCongestion, AServerOnItsOwnCpusIsJudgedByThoseCpus) {
  // The same measured server CPU on a 2-core machine: pinned to one CPU
  // (database.cpus) it saturates that CPU at the two violating loads; able
  // to use both cores, it stays below the 2-core limit.
  TempDir pinned, free;
  cbe_scaling(pinned, {"response_time", "database", "cpu"});
  cbe_scaling(free, {"response_time", "database", "cpu"});
  const double cores_used[] = {0.1, 0.2, 0.3, 0.65, 0.8};  // 1 CPU: limit 0.5; 2: 0.707
  const int instants = static_cast<int>(kCbeDurationMs / 100) - 1;
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    for (TempDir* d : {&pinned, &free}) {
      cbe_db_cpu_log(experiment_path(d->path(), id),
                     {{"SELECT name FROM product WHERE id = $1", 100, 1}}, 0.97, 2);
      write_server_samples(
          experiment_path(d->path(), id), cores_used[k], instants, [](int) { return 0; }, "",
          d == &pinned ? 1 : 2);
    }
  }
  const NodeResult r = evaluate(pinned.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  const std::vector<Evidence> found = cbe_found(r);
  ASSERT_EQ(found.size(), 2u) << "the steps at 37 and 50 users";
  EXPECT_EQ(found[0].values["cores"], 1);
  EXPECT_NE(found[0].test.find("1 cores"), std::string::npos) << found[0].test;
  EXPECT_EQ(evaluate(free.path(), "database_congestion").status, Status::kNotDetected);
}

// Lock waits that grow significantly but stay microseconds long (scenario
// tc18: 36 -> 74 us per BEGIN IMMEDIATE) are no congestion.
TEST(DatabaseCongestion, LockWaitsTooShortToMatterAreNotCongestion) {
  TempDir tiny;
  cbe_scaling(tiny, {"response_time", "database", "cpu"});
  for (int k = 0; k < 5; ++k)
    cbe_db_cpu_log(experiment_path(tiny.path(), "scaling-s" + std::to_string(k)),
                   {{"BEGIN IMMEDIATE", 200, 0.03 + 0.02 * k}, {"UPDATE stock SET n = 3", 200, 1}},
                   0.15, 2);
  const NodeResult r = evaluate(tiny.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  const ExperimentData data = load_experiment_data(tiny.path());
  Settings settings;
  const Heuristic& h = *heuristic_registry().at("database_congestion");
  Context ctx{data, settings, h.defaults(), {}};
  ctx.params["min_lock_wait_share"] = 0;
  nlohmann::json shared;
  EXPECT_EQ(h.evaluate(ctx, shared).status, Status::kDetected) << "the thesis' rule alone";
}

// What matters is the share of the requests' time the lock takes, not how
// long one wait is: a fast service (1.2 -> 3 ms) whose requests wait
// 0.6 -> 1.8 ms for the lock spends most of its time there, whatever the
// 0.5-ms floor that stood here until 2026-11-28 (set for tc18) said of one
// wait. Waits growing the same way behind ten times slower requests are a
// few per cent of them: the lock is not why those requests are slow.
TEST(DatabaseCongestion, ShortWaitsThatTakeMostOfTheRequestsTimeAreCongestion) {
  TempDir fast, slow;
  cbe_scaling(fast, {"response_time", "database", "cpu"}, {1, 1.2, 1.5, 2, 3});
  cbe_scaling(slow, {"response_time", "database", "cpu"}, {10, 12, 15, 20, 30});
  const double wait_ms[] = {0.6, 0.75, 0.95, 1.25, 1.8};
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    for (const TempDir* d : {&fast, &slow})
      cbe_db_cpu_log(experiment_path(d->path(), id), {{"BEGIN IMMEDIATE", 300, wait_ms[k]}}, 0.15,
                     2);
  }
  const NodeResult r = evaluate(fast.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  const std::vector<Evidence> found = cbe_found(r);
  ASSERT_FALSE(found.empty());
  EXPECT_GT(found.back().values.value("wait_share", 0.0), 0.5);
  EXPECT_EQ(evaluate(slow.path(), "database_congestion").status, Status::kNotDetected);
}

TEST(DatabaseCongestion, ServerLockWaitersGrowingWithLoadAreDetected) {
  // TC15 on a database server: more and more backends wait for the lock
  // on "stock"; its CPU stays low. At step k, k of every 5 instants see
  // k waiters (step 0: nobody ever waits, so the lock has no rows there).
  TempDir growing, flat;
  cbe_scaling(growing, {"response_time", "database", "cpu"});
  cbe_scaling(flat, {"response_time", "database", "cpu"});
  const int instants = 100;
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    cbe_db_cpu_log(experiment_path(growing.path(), id), {{"UPDATE stock SET quantity = 1", 100, 1}},
                   0.2, 2);
    cbe_db_cpu_log(experiment_path(flat.path(), id), {{"UPDATE stock SET quantity = 1", 100, 1}},
                   0.2, 2);
    write_server_samples(experiment_path(growing.path(), id), 0.1, instants,
                         [k](int t) { return t % 5 < k ? k : 0; });
    write_server_samples(experiment_path(flat.path(), id), 0.1, instants,
                         [](int t) { return t % 2; });
  }
  const NodeResult r = evaluate(growing.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  const std::vector<Evidence> found = cbe_found(r);
  ASSERT_EQ(found.size(), 4u) << "one test per step into 13, 25, 37, 50 users";
  EXPECT_EQ(found[0].location, "waiters for stock");
  EXPECT_NE(found[0].data.find("server samples n=" + std::to_string(instants)), std::string::npos)
      << found[0].data;
  for (const Evidence& ev : found) EXPECT_LT(ev.p_value, 0.05);
  EXPECT_EQ(cbe_rows_at(r, "database CPU"), 4) << "checked at every load, none saturated";
  EXPECT_EQ(evaluate(flat.path(), "database_congestion").status, Status::kNotDetected);
}

TEST(DatabaseCongestion, FailedDatabaseSamplerIsNotEvaluatedWithItsReason) {
  TempDir d;
  cbe_scaling(d, {"response_time", "database", "cpu"});
  for (int k = 0; k < 5; ++k) {
    const std::string dir = experiment_path(d.path(), "scaling-s" + std::to_string(k));
    cbe_db_cpu_log(dir, {{"SELECT 1", 10, 1}}, 0.9, 2);
    write_server_samples(
        dir, 1.9, 10, [](int) { return 0; },
        k == 2 ? "cannot connect to PostgreSQL (host=127.0.0.1 port=1)" : "");
  }
  const NodeResult r = evaluate(d.path(), "database_congestion");
  EXPECT_EQ(r.status, Status::kNotEvaluated);
  EXPECT_NE(r.reason.find("database sampler failed in experiment 'scaling-s2'"), std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("port=1"), std::string::npos) << r.reason;
}

// The documented hierarchy decision (docs/diagnose/hierarchy.md): The
// Stifle sits under Database Congestion and is examined only when the
// database is congested.
TEST(DatabaseCongestion, StifleIsExaminedOnlyUnderACongestedDatabase) {
  for (const bool congested : {true, false}) {
    TempDir d;
    cbe_scaling(d, {"response_time", "database", "cpu"});
    const double cpu[] = {0.2, 0.4, 0.6, 0.8, 0.95};
    const int calls = 400;
    for (int k = 0; k < 5; ++k) {
      cbe_db_cpu_log(experiment_path(d.path(), "scaling-s" + std::to_string(k)),
                     {{"SELECT * FROM item WHERE title LIKE ?", calls,
                       congested ? kCbeDurationMs * 2 / calls : 1.0}},
                     cpu[k], 2);
    }
    ExperimentSpec load;  // continuously violated: 2 s against 1 s at P99
    load.id = "load-u50";
    load.users = 50;
    load.response_ms = [](int, const std::string&) { return 2000.0; };
    write_experiment(d.path(), load);
    ExperimentSpec single;
    single.id = "single-u1";
    single.kind = "single_user";
    single.users = 1;
    single.requests = 20;
    single.probes = {"response_time", "database"};
    write_experiment(d.path(), single);
    // N+1: each of the 20 requests reads 5 products one by one.
    write_log(experiment_path(d.path(), "single-u1"), [&](format::RecordSink& sink) {
      const format::RecordSchema* db = format::find_builtin_schema("sonde.record.DatabaseCall");
      for (int req = 0; req < 20; ++req) {
        for (int rep = 0; rep < 5; ++rep) {
          format::Record r;
          format::reset_to_defaults(r, db);
          const std::string text = "SELECT name FROM product WHERE id = " + std::to_string(rep);
          r.values[0] = kT0 + (req * 5 + rep) * kMs;
          r.values[1] = kCbeTraceBase + req;
          r.values[3] = int64_t{2 * kMs};
          r.values[4] = std::string_view(text);
          sink.on_record(r);
        }
      }
    });
    const NodeResult root = run_diagnosis(load_experiment_data(d.path()),
                                          parse_diagnose_config(nlohmann::json::object()));
    std::function<const NodeResult*(const NodeResult&, const std::string&)> cbe_find =
        [&](const NodeResult& n, const std::string& id) -> const NodeResult* {
      if (n.id == id) return &n;
      for (const NodeResult& c : n.children)
        if (const NodeResult* f = cbe_find(c, id)) return f;
      return nullptr;
    };
    ASSERT_NE(cbe_find(root, "traffic_jam"), nullptr);
    ASSERT_EQ(cbe_find(root, "traffic_jam")->status, Status::kDetected)
        << cbe_find(root, "traffic_jam")->reason;
    const NodeResult* congestion = cbe_find(root, "database_congestion");
    const NodeResult* stifle = cbe_find(root, "the_stifle");
    ASSERT_NE(stifle, nullptr);
    if (congested) {
      EXPECT_EQ(congestion->status, Status::kDetected) << congestion->reason;
      EXPECT_EQ(stifle->status, Status::kDetected) << stifle->reason;
    } else {
      EXPECT_EQ(congestion->status, Status::kNotDetected) << congestion->reason;
      EXPECT_EQ(stifle->status, Status::kSkipped) << stifle->reason;
    }
  }
}

}  // namespace
}  // namespace sonde::diagnose::test
