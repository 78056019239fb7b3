// Excessive Messaging (thesis H10, message-throughput strategy, as the
// prose defines it, not the inverted pseudo-code of Alg. 22/23): the
// message throughput (MessageSend records per second) stagnates, i.e.
// rises by less than epsilon (relative), at every violating load step
// while the load rises.
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/growth_with_load.hpp"

namespace sonde::diagnose::heuristics {
namespace {

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
  std::map<std::string, double> defaults() const override { return {{"epsilon", 0.05}}; }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    if (steps.size() < 2) return not_evaluated("needs a scaling series with >= 2 complete steps");
    std::vector<double> throughput;
    nlohmann::json points = nlohmann::json::array();
    for (const Experiment* e : steps) {
      if (!e->has_probe("messaging"))
        return not_evaluated("experiment '" + e->id + "' ran without the messaging probe");
      const LogRecords& recs = log_records(*e, "sonde.record.MessageSend");
      if (!recs.error.empty()) return not_evaluated(recs.error);
      const double d = e->duration_s();
      if (d <= 0) return not_evaluated("experiment '" + e->id + "' has no duration");
      throughput.push_back(static_cast<double>(recs.records.size()) / d);
      points.push_back({e->users, throughput.back()});
    }
    if (throughput.back() == 0) {
      NodeResult none;
      none.status = Status::kNotDetected;
      none.reason = "no messages sent";
      return none;
    }
    const std::vector<size_t> critical = violating_step_indexes(ctx, steps);
    NodeResult r;
    int stagnant = 0;
    for (size_t s : critical) {
      const bool flat = throughput[s] < throughput[s - 1] * (1 + ctx.params.at("epsilon")) &&
                        steps[s]->users > steps[s - 1]->users;
      stagnant += flat;
      Evidence ev;
      ev.location = "messaging";
      ev.test = "message throughput rises by < epsilon=" + fmt(ctx.params.at("epsilon")) +
                " while load rises";
      ev.effect_size = throughput[s - 1] > 0 ? throughput[s] / throughput[s - 1] - 1 : 0;
      ev.effect = "relative change of message throughput";
      ev.data =
          std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) + " users";
      ev.detail = fmt(throughput[s - 1]) + " -> " + fmt(throughput[s]) + " messages/s from " +
                  std::to_string(steps[s - 1]->users) + " to " + std::to_string(steps[s]->users) +
                  " users" + (flat ? " (stagnates)" : "");
      r.evidence.push_back(std::move(ev));
    }
    r.charts["message_throughput"] = points;
    const bool found = !critical.empty() && stagnant == static_cast<int>(critical.size());
    r.status = found ? Status::kDetected : Status::kNotDetected;
    r.reason = found ? "message throughput stagnates while load rises and requirements are violated"
                     : "message throughput keeps up with the load";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_excessive_messaging() {
  return std::make_unique<ExcessiveMessaging>();
}

}  // namespace sonde::diagnose::heuristics
