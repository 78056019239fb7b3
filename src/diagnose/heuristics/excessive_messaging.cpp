// Excessive Messaging (thesis H10, Sec. 6.3.10), two of the thesis' tests:
//
// - message throughput (the Message Throughput strategy, the digest's
//   Strategy C, as the prose defines it, not the inverted pseudo-code of
//   Alg. 22/23): MessageSend records per second rise by less than epsilon
//   at every violating load step. epsilon is relative and sonde's 0.05
//   (as in DynamicSpotter's code); the thesis' is absolute (mu < mu_p +
//   epsilon) and has no value;
// - queue analysis (Alg. 21, which Alg. 20, 22 and 23 all apply):
//   the messaging layer's queues grow significantly into
//   every violating load. A bounded queue that is full shows as senders
//   waiting for space, so the measure is the MessageSend records' duration
//   per destination: it must grow significantly (Welch, alpha; and by at
//   least min_wait_increase, relative), and all sends must take at least
//   min_wait_share of the summed response time: the larger part, the
//   majority every share rule of the hierarchy asks (a CPU queue slows
//   sends down too, by a sliver of the requests': tc23, 0.4%; full queues
//   in the shop's stored runs: 71-98%; until 2026-12-02 the share was 0.05,
//   set for tc23). An absolute floor on the wait (0.1 ms, "about one
//   delivery" in the shop, set for tc23) was dropped: tc19's waits sat
//   between 0.1 and 0.2 ms, and a floor in ms means nothing on another
//   system.
//
// The throughput test counts a step only while the messaging layer is
// busy there (messaging_busy in common.hpp): the sends take at least
// min_wait_share of the response time and significantly longer than at
// the lowest load. The thesis' pseudo-code asks the same of its network
// variant (throughput > half the bandwidth); without it, whatever else
// saturates the system (a ramp's lock, the CPU, the database) flattens
// the message throughput with every other throughput and reads as
// excessive messaging (scenarios tc06). `busy_check` 0: the prose's rule.
//
// `busy_where` (the default 1 since the set after 5ffdffd; 0 judges at
// every violating step): 1 judges the sends' share of the response time
// at the highest violating load only, for both tests. At the first
// violating step of a messaging bottleneck the queue is only beginning
// to fill: the sends took 0.60-0.65 of the response time there in tc19
// and tc20 (three fresh shop runs),
// against at least 0.88 at every other step of every messaging case and
// at most 0.010 at any step of any other case; so `min_wait_share` 0.5
// sat at the edge of that first step (2x, 0.667, missed both cases) while
// the highest load leaves it in a wide gap (parameters.md, fifteenth
// result). Chosen after those runs: training until fresh runs judge it.
//
// With a message broker sampled ("broker" in the config, e.g. Redis), the
// thesis' own data replaces the probe's where it can: the throughput is
// the broker's message count (Message Throughput as the thesis ran it), a third
// test is Alg. 21 on the broker's queue lengths (a queue grows
// significantly into every violating load, to at least min_queue_length),
// and messaging is busy also when its queues hold min_queue_length
// messages on average. A failed broker sampler makes the node "not
// evaluated": its data is missing, not absent.
//
// Either suffices. The second is what a closed system with flow control
// shows: the first violating load is where the queue saturates, so the
// throughput still grew into it from an unsaturated step and the first
// test cannot fire, while the senders' waits rise at once. Waits stay
// flat when something else (CPU, a lock, the database) limits the system,
// however much the message throughput stagnates with it.
#include <algorithm>
#include <functional>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/growth_with_load.hpp"
#include "stats/descriptive.hpp"

namespace sonde::diagnose::heuristics {
namespace {

// One key's verdict at one violating step.
struct StepGrowth {
  bool grows = false;
  double relative = 0;  // relative increase, for ranking keys
  Evidence evidence;
};

// Alg. 21's shape, shared by the two queue tests: of `keys`, the one that
// grows at every critical step, ranked by its largest relative increase;
// its evidence goes to `r`. "" when none grows at every step.
std::string strongest_growth(const std::vector<std::string>& keys,
                             const std::vector<size_t>& critical,
                             const std::function<StepGrowth(const std::string&, size_t)>& at,
                             NodeResult& r) {
  if (critical.empty()) return "";
  std::string best;
  double best_ratio = 0;
  std::vector<Evidence> best_evidence;
  for (const std::string& key : keys) {
    std::vector<Evidence> evs;
    double ratio = 0;
    bool all = true;
    for (size_t s : critical) {
      StepGrowth g = at(key, s);
      all = all && g.grows;
      ratio = std::max(ratio, g.relative);
      evs.push_back(std::move(g.evidence));
    }
    if (all && ratio > best_ratio) {
      best = key;
      best_ratio = ratio;
      best_evidence = std::move(evs);
    }
  }
  for (Evidence& ev : best_evidence) r.evidence.push_back(std::move(ev));
  return best;
}

class ExcessiveMessaging : public Heuristic {
 public:
  std::string name() const override { return "excessive_messaging"; }
  std::string title() const override { return "Excessive Messaging"; }
  std::string description() const override {
    return "More users do not get more messages through: the messaging layer is the limit. "
           "Send fewer, larger messages or fewer hops.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"scaling", "scaling", 5, {"response_time", "messaging"}}};
  }
  std::map<std::string, double> defaults() const override {
    return {{"epsilon", 0.05}, {"min_wait_increase", 0}, {"busy_check", 1},
            {"busy_where", 1}, {"min_queue_length", 1},  {"min_wait_share", 0.5}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"busy_check", {ParameterKind::kSwitch}},
            {"busy_where", {ParameterKind::kSwitch}},
            {"min_wait_share", {ParameterKind::kShare}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    if (steps.size() < 2) return not_evaluated("needs a scaling series with >= 2 complete steps");
    std::vector<double> throughput;
    std::vector<BrokerSamples> broker;
    std::vector<double> broker_throughput;
    nlohmann::json points = nlohmann::json::array();
    for (const Experiment* e : steps) {
      if (!e->has_probe("messaging"))
        return not_evaluated("experiment '" + e->id + "' ran without the messaging probe");
      broker.push_back(broker_samples(*e));
      if (!broker.back().error.empty())
        return not_evaluated("the broker sampler failed in experiment '" + e->id +
                             "': " + broker.back().error);
      if (broker.back().present && broker.back().samples < 2)
        return not_evaluated("the broker sampler took fewer than 2 samples in experiment '" +
                             e->id + "' (a stable phase shorter than its interval?)");
      const LogRecords& recs = log_records(*e, "sonde.record.MessageSend");
      if (!recs.error.empty()) return not_evaluated(recs.error);
      const double d = e->duration_s();
      if (d <= 0) return not_evaluated("experiment '" + e->id + "' has no duration");
      throughput.push_back(static_cast<double>(recs.records.size()) / d);
      broker_throughput.push_back(broker.back().messages / d);
    }
    // The broker's count where every step has it, else the probe's: one
    // unit for the whole series.
    const bool sampled =
        std::all_of(broker.begin(), broker.end(), [](const BrokerSamples& b) { return b.present; });
    if (sampled) throughput = broker_throughput;
    for (size_t s = 0; s < steps.size(); ++s) points.push_back({steps[s]->users, throughput[s]});
    if (throughput.back() == 0) {
      NodeResult none;
      none.status = Status::kNotDetected;
      none.reason = "no messages sent";
      return none;
    }
    const std::vector<size_t> critical = violating_step_indexes(ctx, steps);
    // The sends' time at every violating step against the lowest load,
    // once for both tests (each reads the share; busy_where 1 judges the
    // highest violating step's).
    std::vector<MessagingBusy> sends(steps.size());
    for (size_t s : critical) {
      sends[s] = messaging_busy(*steps.front(), *steps[s], ctx.settings.alpha,
                                ctx.params.at("min_wait_share"));
      if (!sends[s].error.empty()) return not_evaluated(sends[s].error);
    }
    NodeResult r;
    r.charts["message_throughput"] = points;
    const bool stagnates =
        throughput_stagnates(ctx, steps, throughput, broker, sampled, critical, sends, r);
    std::string error;
    std::string queue, broker_queue;
    if (!stagnates) {
      queue = saturated_queue(ctx, steps, critical, sends, r, &error);
      if (!error.empty()) return not_evaluated(error);
    }
    if (!stagnates && queue.empty() && sampled)
      broker_queue = growing_broker_queue(ctx, steps, broker, critical, r);
    r.status = stagnates || !queue.empty() || !broker_queue.empty() ? Status::kDetected
                                                                    : Status::kNotDetected;
    r.reason = stagnates ? "message throughput stagnates while load rises and requirements are "
                           "violated"
               : !queue.empty() ? "the queue to " + queue +
                                      " is full at every violating load: senders wait for space"
               : !broker_queue.empty()
                   ? "the broker's queue " + broker_queue + " grows at every violating load"
                   : "message throughput keeps up with the load and no queue fills up";
    return r;
  }

 private:
  // Strategy C: total message throughput flat at every violating step.
  static bool throughput_stagnates(const Context& ctx, const std::vector<const Experiment*>& steps,
                                   const std::vector<double>& throughput,
                                   const std::vector<BrokerSamples>& broker, bool counted_by_broker,
                                   const std::vector<size_t>& critical,
                                   const std::vector<MessagingBusy>& sends_at, NodeResult& r) {
    int stagnant = 0;
    const bool busy_check = ctx.params.at("busy_check") != 0;
    const bool at_highest = ctx.params.at("busy_where") != 0;
    for (size_t s : critical) {
      const double queued = queued_messages(broker[s]);
      const MessagingBusy& sends = sends_at[s];
      const MessagingBusy& top = sends_at[critical.back()];
      const bool sends_busy = at_highest ? top.busy : sends.busy;
      const bool busy = !busy_check || sends_busy || queued >= ctx.params.at("min_queue_length");
      const bool flat = throughput[s] < throughput[s - 1] * (1 + ctx.params.at("epsilon")) &&
                        steps[s]->users > steps[s - 1]->users && busy;
      stagnant += flat;
      Evidence ev;
      ev.location = "messaging";
      ev.test = "message throughput rises by < epsilon=" + fmt(ctx.params.at("epsilon")) +
                " while load rises";
      ev.effect_size = throughput[s - 1] > 0 ? throughput[s] / throughput[s - 1] - 1 : 0;
      ev.effect = "relative change of message throughput";
      ev.data =
          std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) + " users";
      ev.detail = fmt(throughput[s - 1]) + " -> " + fmt(throughput[s]) + " messages/s" +
                  (counted_by_broker ? " (the broker's count)" : "") + " from " +
                  std::to_string(steps[s - 1]->users) + " to " + std::to_string(steps[s]->users) +
                  " users, sends took " + fmt(sends.send_ms) + " ms on average (" +
                  fmt(sends.share * 100) + "% of the response time; p=" + fmt(sends.p_greater) +
                  " against " + std::to_string(steps.front()->users) + " user(s))" +
                  (broker[s].present ? ", " + fmt(queued) + " messages queued in the broker" : "") +
                  (at_highest && busy_check
                       ? "; messaging judged at the highest violating load (" +
                             std::to_string(steps[critical.back()]->users) + " users: sends " +
                             fmt(top.share * 100) + "% of the response time)"
                       : "") +
                  (flat    ? " (stagnates)"
                   : !busy ? " (messaging not busy)"
                           : "");
      ev.values = {{"throughput_before", throughput[s - 1]},
                   {"throughput_after", throughput[s]},
                   {"send_ms", sends.send_ms},
                   {"send_share", sends.share},
                   {"send_p_greater", sends.p_greater},
                   {"queued", queued},
                   {"busy", busy},
                   {"busy_judged_at_highest_load", at_highest},
                   {"stagnates", flat}};
      r.evidence.push_back(std::move(ev));
    }
    return !critical.empty() && stagnant == static_cast<int>(critical.size());
  }

  // Mean messages waiting in the broker's queues (summed over queues), 0
  // without a broker sampler.
  static double queued_messages(const BrokerSamples& b) {
    double total = 0;
    for (const auto& [queue, lengths] : b.queue_length)
      if (!lengths.empty()) total += stats::mean(lengths);
    return total;
  }

  // Alg. 21 on the broker's queue lengths: the queue that grows most,
  // significantly at every violating step and to at least
  // min_queue_length messages on average; "" when none does.
  static std::string growing_broker_queue(const Context& ctx,
                                          const std::vector<const Experiment*>& steps,
                                          const std::vector<BrokerSamples>& broker,
                                          const std::vector<size_t>& critical, NodeResult& r) {
    if (critical.empty()) return "";
    std::vector<std::string> queues;
    for (const auto& entry : broker[critical.back()].queue_length) queues.push_back(entry.first);
    // A queue the sampler never saw at a step was empty there (Redis
    // removes empty lists): zeros at every instant.
    auto lengths = [&](const std::string& queue, size_t step) {
      const auto it = broker[step].queue_length.find(queue);
      return it != broker[step].queue_length.end() ? it->second
                                                   : std::vector<double>(broker[step].samples, 0.0);
    };
    auto at = [&](const std::string& queue, size_t s) {
      const std::vector<double> va = lengths(queue, s - 1), vb = lengths(queue, s);
      const Increase inc = test_increase(va, vb, ctx.settings.alpha, 0);
      const double length = vb.empty() ? 0 : stats::mean(vb);
      StepGrowth g;
      g.grows = inc.significant && length >= ctx.params.at("min_queue_length");
      g.relative = inc.relative;
      g.evidence = increase_evidence(
          inc, "broker queue " + queue,
          std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) +
              " users, n=" + std::to_string(va.size()) + "/" + std::to_string(vb.size()));
      g.evidence.detail = "the broker's queue " + queue + " held " + fmt(inc.test.mean_a) + " -> " +
                          fmt(length) + " messages on average from " +
                          std::to_string(steps[s - 1]->users) + " to " +
                          std::to_string(steps[s]->users) + " users" + (g.grows ? " (grows)" : "");
      return g;
    };
    return strongest_growth(queues, critical, at, r);
  }

  // Alg. 21 with the senders' waits as the fill of bounded queues: the
  // destination whose waits grow most, or "" when none does at every
  // violating step.
  static std::string saturated_queue(const Context& ctx,
                                     const std::vector<const Experiment*>& steps,
                                     const std::vector<size_t>& critical,
                                     const std::vector<MessagingBusy>& sends, NodeResult& r,
                                     std::string* error) {
    if (critical.empty()) return "";
    const KeyedSeries ks = keyed_series(steps, "sonde.record.MessageSend", "messaging", "duration",
                                        "destination", 1e-6);
    if (!ks.error.empty()) {
      *error = ks.error;
      return "";
    }
    std::vector<std::string> destinations;
    for (const auto& entry : ks.per_step[critical.back()]) destinations.push_back(entry.first);
    const bool at_highest = ctx.params.at("busy_where") != 0;
    const double top_share = sends[critical.back()].share;
    auto at = [&](const std::string& destination, size_t s) {
      static const std::vector<double> none;
      const auto a = ks.per_step[s - 1].find(destination);
      const auto b = ks.per_step[s].find(destination);
      const std::vector<double>& va = a == ks.per_step[s - 1].end() ? none : a->second;
      const std::vector<double>& vb = b == ks.per_step[s].end() ? none : b->second;
      const Increase inc =
          test_increase(va, vb, ctx.settings.alpha, ctx.params.at("min_wait_increase"));
      const double wait = vb.empty() ? 0 : stats::mean(vb);
      // All sends' share of the step's response time (messaging_busy's):
      // waits that are a sliver of it (a CPU queue slowing every thread
      // down, tc23: 0.4%) do not make messaging the limit.
      const double share = sends[s].share;
      // busy_where 1: where the time goes once the system is most loaded.
      const double judged = at_highest ? top_share : share;
      StepGrowth g;
      g.grows = inc.significant && judged >= ctx.params.at("min_wait_share");
      g.relative = inc.relative;
      g.evidence = increase_evidence(
          inc, "queue " + destination,
          std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) +
              " users, n=" + std::to_string(va.size()) + "/" + std::to_string(vb.size()));
      g.evidence.detail = "sending to " + destination + " waited " + fmt(inc.test.mean_a) +
                          " ms -> " + fmt(wait) + " ms on average from " +
                          std::to_string(steps[s - 1]->users) + " to " +
                          std::to_string(steps[s]->users) + " users; all sends waited " +
                          fmt(share * 100) + "% of the requests' response time" +
                          (at_highest ? " (" + fmt(top_share * 100) +
                                            "% at the highest violating load, where it is judged)"
                                      : "") +
                          (g.grows ? " (queue full)" : "");
      return g;
    };
    return strongest_growth(destinations, critical, at, r);
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_excessive_messaging() {
  return std::make_unique<ExcessiveMessaging>();
}

}  // namespace sonde::diagnose::heuristics
