// Excessive Messaging on synthetic experiment data (planted / absent /
// data missing), with the sends' own times and a broker's counts.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <memory>

#include "diagnose/database/postgres_sampler.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/request_services.hpp"
#include "diagnose_test_support.hpp"
#include "format/record.hpp"

namespace sonde::diagnose::test {
namespace {

// `messages` MessageSend records to `destination`; the sender waited
// `wait_us` microseconds (plus a little spread) for each.
void write_message_log(const std::string& dir, int messages, double wait_us = 1,
                       std::string_view destination = "orders") {
  write_log(dir, [&](format::RecordSink& sink) {
    for (int i = 0; i < messages; ++i) {
      format::Record r;
      format::reset_to_defaults(r, &message_send_schema());
      r.values[0] = kT0 + i * kMs;
      r.values[1] = int64_t{i};
      r.values[3] = static_cast<int64_t>(wait_us * 1000 * (0.8 + 0.05 * (i % 9)));
      r.values[4] = destination;
      r.values[5] = int64_t{64};
      sink.on_record(r);
    }
  });
}

TEST(ExcessiveMessaging, ThroughputStagnatesWhileLoadRises) {
  TempDir stagnant, scaling, no_probe;
  const std::vector<std::string> probes = {"response_time", "messaging"};
  write_scaling(stagnant, {100, 300, 700, 1200, 2000}, probes);
  write_scaling(scaling, {100, 300, 700, 1200, 2000}, probes);
  write_scaling(no_probe, {100, 300, 700, 1200, 2000}, {"response_time"});
  // Flat from the second step on, while the sends slow down from 0.2 ms to
  // 330 ms, 55-92% of the response time at 37 and 50 users: messaging is
  // busy (takes the larger part). (They stop slowing down after 37 users,
  // so no queue fills at every step when every step counts.)
  const double stagnant_waits_us[] = {200, 60000, 150000, 330000, 330000};
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    write_message_log(experiment_path(stagnant.path(), id), k == 0 ? 100 : 1000,
                      stagnant_waits_us[k]);
    write_message_log(experiment_path(scaling.path(), id), 100 + 1000 * k, 200);
  }
  EXPECT_EQ(evaluate(stagnant.path(), "excessive_messaging").status, Status::kNotDetected)
      << "outside a Traffic Jam subtree every step counts, and 1 -> 13 users did grow";
  // Under Traffic Jam only the violating loads count (37 and 50 users here).
  const ExperimentData data = load_experiment_data(stagnant.path());
  Settings settings;
  std::map<std::string, nlohmann::json> ancestors = {
      {"traffic_jam", {{"violating_users", {37, 50}}}}};
  const Heuristic& h = *heuristic_registry().at("excessive_messaging");
  Context ctx{data, settings, h.defaults(), ancestors};
  nlohmann::json shared;
  EXPECT_EQ(h.evaluate(ctx, shared).status, Status::kDetected);
  const ExperimentData grows = load_experiment_data(scaling.path());
  Context ctx2{grows, settings, h.defaults(), ancestors};
  EXPECT_EQ(h.evaluate(ctx2, shared).status, Status::kNotDetected);
  EXPECT_EQ(evaluate(no_probe.path(), "excessive_messaging").status, Status::kNotEvaluated);
}

// Excessive Messaging where Traffic Jam found 37 and 50 users violating.
NodeResult evaluate_under_traffic_jam(const TempDir& d) {
  const ExperimentData data = load_experiment_data(d.path());
  Settings settings;
  const std::map<std::string, nlohmann::json> ancestors = {
      {"traffic_jam", {{"violating_users", {37, 50}}}}};
  const Heuristic& h = *heuristic_registry().at("excessive_messaging");
  nlohmann::json shared;
  return h.evaluate({data, settings, h.defaults(), ancestors}, shared);
}

// Something else saturates the system (a ramp's lock, the CPU): the
// message throughput flattens with every other throughput, but each send
// takes microseconds. Not excessive messaging, unless the busy check is
// switched off (the thesis' prose).
TEST(ExcessiveMessaging, StagnationWhileMessagingIsIdleIsNotExcessive) {
  TempDir idle;
  write_scaling(idle, {100, 300, 700, 1200, 2000}, {"response_time", "messaging"});
  for (int k = 0; k < 5; ++k)
    write_message_log(experiment_path(idle.path(), "scaling-s" + std::to_string(k)),
                      k == 0 ? 100 : 1000, 5);
  const ExperimentData data = load_experiment_data(idle.path());
  Settings settings;
  std::map<std::string, nlohmann::json> ancestors = {
      {"traffic_jam", {{"violating_users", {37, 50}}}}};
  const Heuristic& h = *heuristic_registry().at("excessive_messaging");
  nlohmann::json shared;
  Context ctx{data, settings, h.defaults(), ancestors};
  const NodeResult r = h.evaluate(ctx, shared);
  EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_EQ(r.evidence[0].values["busy"], false);
  EXPECT_NE(r.evidence[0].detail.find("messaging not busy"), std::string::npos)
      << r.evidence[0].detail;
  ctx.params["busy_check"] = 0;
  EXPECT_EQ(h.evaluate(ctx, shared).status, Status::kDetected);
}

// Busy is decided from the data, not from a send time in ms: sends that
// take 40% of the response time but no longer than with one user are the
// service's own demand, not a queue; sends that slow down 5-fold but stay
// a sliver of the response time are slowed by something else (a saturated
// CPU, scenario tc23). Neither makes a flat message throughput messaging's.
TEST(ExcessiveMessaging, BusyMeansSlowerThanAtTheLowestLoadAndAMaterialShare) {
  TempDir constant, sliver;
  for (const TempDir* d : {&constant, &sliver})
    write_scaling(*d, {100, 300, 700, 1200, 2000}, {"response_time", "messaging"});
  const double sliver_waits_us[] = {60, 100, 200, 300, 300};
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    write_message_log(experiment_path(constant.path(), id), k == 0 ? 100 : 1000, 150000);
    write_message_log(experiment_path(sliver.path(), id), k == 0 ? 100 : 1000, sliver_waits_us[k]);
  }
  for (const TempDir* d : {&constant, &sliver}) {
    const NodeResult r = evaluate_under_traffic_jam(*d);
    EXPECT_EQ(r.status, Status::kNotDetected) << r.reason;
    ASSERT_FALSE(r.evidence.empty());
    EXPECT_EQ(r.evidence[0].values["busy"], false) << r.evidence[0].detail;
  }
  const NodeResult c = evaluate_under_traffic_jam(constant);
  EXPECT_GT(c.evidence[0].values["send_share"].get<double>(), 0.3) << c.evidence[0].detail;
  EXPECT_GT(c.evidence[0].values["send_p_greater"].get<double>(), 0.05) << c.evidence[0].detail;
  const NodeResult s = evaluate_under_traffic_jam(sliver);
  EXPECT_LT(s.evidence[0].values["send_share"].get<double>(), 0.01) << s.evidence[0].detail;
  EXPECT_LT(s.evidence[0].values["send_p_greater"].get<double>(), 0.05) << s.evidence[0].detail;
}

// busy_where 1 judges the sends' share of the response time at the
// highest violating load only. At the first violating step a filling
// queue takes 60% of the response time here (tc19's and tc20's first
// steps: 60-65%), at the highest 95%: a stricter min_wait_share (2/3, the
// sensitivity study's 2x) misses the case when every step must be busy,
// and not when the highest load decides.
TEST(ExcessiveMessaging, BusyWhereOneJudgesTheHighestViolatingLoad) {
  TempDir d;
  write_scaling(d, {100, 300, 700, 1200, 2000}, {"response_time", "messaging"});
  // 300 requests per step: 1,000 sends of 216 ms are 60% of 300 x 1.2 s,
  // 1,000 of 570 ms 95% of 300 x 2 s.
  const double waits_us[] = {200, 200, 200, 216000, 570000};
  for (int k = 0; k < 5; ++k) {
    write_message_log(experiment_path(d.path(), "scaling-s" + std::to_string(k)),
                      k == 0 ? 100 : 1000, waits_us[k]);
  }
  const ExperimentData data = load_experiment_data(d.path());
  Settings settings;
  const std::map<std::string, nlohmann::json> ancestors = {
      {"traffic_jam", {{"violating_users", {37, 50}}}}};
  const Heuristic& h = *heuristic_registry().at("excessive_messaging");
  auto evaluate_at = [&](double busy_where, double min_wait_share) {
    std::map<std::string, double> params = h.defaults();
    params["busy_where"] = busy_where;
    params["min_wait_share"] = min_wait_share;
    nlohmann::json shared;
    return h.evaluate({data, settings, params, ancestors}, shared);
  };
  EXPECT_EQ(evaluate_at(0, 0.5).status, Status::kDetected);
  EXPECT_EQ(evaluate_at(1, 0.5).status, Status::kDetected);
  const NodeResult every_step = evaluate_at(0, 2.0 / 3);
  EXPECT_EQ(every_step.status, Status::kNotDetected) << every_step.reason;
  const NodeResult highest = evaluate_at(1, 2.0 / 3);
  ASSERT_EQ(highest.status, Status::kDetected) << highest.reason;
  ASSERT_FALSE(highest.evidence.empty());
  EXPECT_EQ(highest.evidence[0].values["busy_judged_at_highest_load"], true);
  EXPECT_NEAR(highest.evidence[0].values["send_share"].get<double>(), 0.6, 0.01);
  EXPECT_NE(highest.evidence[0].detail.find("judged at the highest violating load (50 users"),
            std::string::npos)
      << highest.evidence[0].detail;
}

// Alg. 21's queue analysis with bounded queues: the throughput still grows
// into the first violating load (the queue saturates there), but the
// senders' waits for queue space rise at every violating load.
TEST(ExcessiveMessaging, AQueueThatFillsAtEveryViolatingLoadIsFound) {
  TempDir full, cpu_bound, tiny_waits, diluted;
  const std::vector<std::string> probes = {"response_time", "messaging"};
  for (const TempDir* d : {&full, &cpu_bound, &tiny_waits})
    write_scaling(*d, {5, 8, 12, 20, 40}, probes);
  // The same waits in requests that take seconds: a sliver of their time.
  write_scaling(diluted, {100, 300, 700, 1200, 2000}, probes);
  const int sends[] = {100, 1100, 2100, 3000, 3050};  // grows into step 3, then flat
  // At 37 and 50 users the waits are 75% and 63% of the response time.
  const double full_waits_us[] = {2, 2, 3, 1500, 2500};
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    write_message_log(experiment_path(full.path(), id), sends[k], full_waits_us[k],
                      "orders>notification");
    write_message_log(experiment_path(diluted.path(), id), sends[k], full_waits_us[k],
                      "orders>notification");
    // Something else limits the system: sends stagnate, nobody waits.
    write_message_log(experiment_path(cpu_bound.path(), id), sends[k], 3, "orders>notification");
    // Waits grow significantly but stay a sliver of the response time.
    write_message_log(experiment_path(tiny_waits.path(), id), sends[k], 2 + 4.0 * k,
                      "orders>notification");
  }
  const Heuristic& h = *heuristic_registry().at("excessive_messaging");
  Settings settings;
  const std::map<std::string, nlohmann::json> ancestors = {
      {"traffic_jam", {{"violating_users", {37, 50}}}}};
  nlohmann::json shared;
  const ExperimentData full_data = load_experiment_data(full.path());
  const NodeResult r = h.evaluate({full_data, settings, h.defaults(), ancestors}, shared);
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  EXPECT_NE(r.reason.find("orders>notification"), std::string::npos) << r.reason;
  const ExperimentData cpu_data = load_experiment_data(cpu_bound.path());
  EXPECT_EQ(h.evaluate({cpu_data, settings, h.defaults(), ancestors}, shared).status,
            Status::kNotDetected);
  const ExperimentData diluted_data = load_experiment_data(diluted.path());
  const NodeResult d = h.evaluate({diluted_data, settings, h.defaults(), ancestors}, shared);
  EXPECT_EQ(d.status, Status::kNotDetected) << d.reason;
  const ExperimentData tiny_data = load_experiment_data(tiny_waits.path());
  EXPECT_EQ(h.evaluate({tiny_data, settings, h.defaults(), ancestors}, shared).status,
            Status::kNotDetected);
}

// The broker sampler's rows for one experiment: `messages` in all, and
// queue `queue` at `length` (+/- a little) at each of 40 instants; or a
// failed sampler with `reason`.
void write_broker_samples(const std::string& exp, double messages, const std::string& queue,
                          double length, const std::string& reason = "", int instants = 40) {
  nlohmann::json e;
  std::ifstream(exp + "/experiment.json") >> e;
  e["samplers"]["redis"] = {{"status", reason.empty() ? "ok" : "failed"}, {"reason", reason}};
  std::ofstream(exp + "/experiment.json") << e.dump();
  std::vector<SampledValue> rows;
  for (int t = 1; t <= instants; ++t) {
    const int64_t at = kT0 + t * 100 * kMs;
    rows.push_back({at, "", "clients", "", 5});
    rows.push_back({at, "", "messages", "", messages / instants});
    // length < 0: the queue was never seen (Redis removes empty lists).
    if (length >= 0)
      rows.push_back({at, "", "queue_length", queue, length * (0.9 + 0.05 * (t % 5))});
  }
  if (reason.empty()) database::write_samples_csv(exp + "/samples.csv", "redis", rows);
}

// With a broker sampled, its own message count is the throughput (the
// thesis' Strategy C): here the probe's sends grow, the broker's messages
// stagnate (the probe saw only some senders), and the queues are full.
TEST(ExcessiveMessaging, TheBrokersMessageCountIsTheThroughput) {
  TempDir d;
  write_scaling(d, {100, 300, 700, 1200, 2000}, {"response_time", "messaging"});
  for (int k = 0; k < 5; ++k) {
    const std::string exp = experiment_path(d.path(), "scaling-s" + std::to_string(k));
    write_message_log(exp, 100 + 1000 * k, 3);
    write_broker_samples(exp, k < 2 ? 4000.0 * (k + 1) : 8000, "shop:queue:orders", 200);
  }
  const NodeResult r = evaluate_under_traffic_jam(d);
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_NE(r.evidence[0].detail.find("(the broker's count)"), std::string::npos)
      << r.evidence[0].detail;
  EXPECT_EQ(r.evidence[0].values["busy"], true) << "200 messages queued: busy";
}

// Alg. 21 on the broker's queues: throughput grows, the senders hardly
// wait (an unbounded queue), but one queue grows at every violating load.
TEST(ExcessiveMessaging, ABrokerQueueThatGrowsAtEveryViolatingLoadIsFound) {
  TempDir grows, flat;
  for (const TempDir* d : {&grows, &flat})
    write_scaling(*d, {100, 300, 700, 1200, 2000}, {"response_time", "messaging"});
  // Empty, so never seen, until the first violating load.
  const double lengths[] = {-1, -1, -1, 40, 300};
  for (int k = 0; k < 5; ++k) {
    const std::string id = "scaling-s" + std::to_string(k);
    for (const TempDir* d : {&grows, &flat})
      write_message_log(experiment_path(d->path(), id), 100 + 1000 * k, 3);
    write_broker_samples(experiment_path(grows.path(), id), 4000.0 * (k + 1),
                         "shop:queue:notification", lengths[k]);
    write_broker_samples(experiment_path(flat.path(), id), 4000.0 * (k + 1),
                         "shop:queue:notification", 0.5);
  }
  const NodeResult r = evaluate_under_traffic_jam(grows);
  EXPECT_EQ(r.status, Status::kDetected) << r.reason;
  EXPECT_NE(r.reason.find("the broker's queue shop:queue:notification grows"), std::string::npos)
      << r.reason;
  const NodeResult none = evaluate_under_traffic_jam(flat);
  EXPECT_EQ(none.status, Status::kNotDetected) << none.reason;
}

// A broker that was configured but could not be sampled: its data is
// missing, so the node is not evaluated (not "not detected").
TEST(ExcessiveMessaging, AFailedBrokerSamplerMeansNotEvaluated) {
  TempDir d;
  write_scaling(d, {100, 300, 700, 1200, 2000}, {"response_time", "messaging"});
  for (int k = 0; k < 5; ++k) {
    const std::string exp = experiment_path(d.path(), "scaling-s" + std::to_string(k));
    write_message_log(exp, 100 + 1000 * k, 3);
    write_broker_samples(
        exp, 0, "q", 0,
        k == 3 ? "cannot connect to Redis at 127.0.0.1:6390: Connection refused" : "");
  }
  const NodeResult r = evaluate_under_traffic_jam(d);
  EXPECT_EQ(r.status, Status::kNotEvaluated);
  EXPECT_NE(r.reason.find("the broker sampler failed in experiment 'scaling-s3'"),
            std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("127.0.0.1:6390"), std::string::npos) << r.reason;
  // A step with a single sampling instant has no message count (counts are
  // differences): not evaluated either, rather than a "collapse" to 0.
  write_broker_samples(experiment_path(d.path(), "scaling-s3"), 1000, "q", 0, "", 1);
  const NodeResult one = evaluate_under_traffic_jam(d);
  EXPECT_EQ(one.status, Status::kNotEvaluated);
  EXPECT_NE(one.reason.find("fewer than 2 samples in experiment 'scaling-s3'"), std::string::npos)
      << one.reason;
}

}  // namespace
}  // namespace sonde::diagnose::test
