// Traffic Jam (thesis H5, t-test strategy, Alg. 12-13): in a scaling series
// (1 user .. max, 5 steps), a service whose requirement is violated at some
// loads, and whose response time rises significantly into every violating
// load, is jammed: requests queue for something. The thesis' "nu = theta"
// (consecutive increases counted with reset) is read as its prose says:
// a significant increase into each violating load step.
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/stats/descriptive.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class TrafficJam : public Heuristic {
 public:
  std::string name() const override { return "traffic_jam"; }
  std::string title() const override { return "Traffic Jam"; }
  std::string description() const override {
    return "Response times grow with the number of users until the requirement is violated: "
           "requests wait for a shared resource.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"scaling", "scaling", 5, {"response_time"}}};
  }
  std::map<std::string, double> defaults() const override {
    return {{"steps", 5}, {"min_relative_increase", 0}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    if (steps.size() < 2) {
      return not_evaluated(
          "needs a scaling series (series 'scaling') with >= 2 complete steps, found " +
          std::to_string(steps.size()));
    }
    NodeResult r;
    nlohmann::json jammed = nlohmann::json::array();
    nlohmann::json violating_users = nlohmann::json::array();
    nlohmann::json chart = nlohmann::json::array();
    for (const std::string& service : steps.back()->services()) {
      const Requirement& req = ctx.settings.for_service(service);
      int violating = 0;
      int increased = 0;
      nlohmann::json points = nlohmann::json::array();
      nlohmann::json loads = nlohmann::json::array();
      for (size_t s = 0; s < steps.size(); ++s) {
        const std::vector<double> rt = steps[s]->response_times(service);
        if (rt.empty()) continue;
        const double p = stats::percentile(rt, req.percentile);
        const stats::Interval ci = stats::mean_confidence_interval(rt, ctx.settings.alpha);
        points.push_back({{"users", steps[s]->users},
                          {"mean", ci.estimate},
                          {"low", ci.low},
                          {"high", ci.high},
                          {"percentile", p}});
        if (s == 0 || p <= req.threshold_ms) continue;
        ++violating;
        loads.push_back(steps[s]->users);
        const Increase inc =
            test_increase(steps[s - 1]->response_times(service), rt, ctx.settings.alpha,
                          ctx.params.at("min_relative_increase"));
        increased += inc.significant;
        Evidence ev = increase_evidence(inc, service,
                                        std::to_string(steps[s - 1]->users) + " -> " +
                                            std::to_string(steps[s]->users) + " users");
        ev.detail = service + ": mean " + fmt(inc.test.mean_a) + " ms at " +
                    std::to_string(steps[s - 1]->users) + " users -> " + fmt(inc.test.mean_b) +
                    " ms at " + std::to_string(steps[s]->users) + " users (P" +
                    fmt(req.percentile * 100) + " " + fmt(p) + " ms > " + fmt(req.threshold_ms) +
                    " ms)";
        r.evidence.push_back(std::move(ev));
      }
      const bool found = violating > 0 && increased == violating;
      if (found) {
        jammed.push_back(service);
        for (const auto& u : loads) violating_users.push_back(u);
      }
      chart.push_back({{"service", service},
                       {"threshold_ms", req.threshold_ms},
                       {"points", points},
                       {"found", found}});
    }
    r.charts["scaling"] = chart;
    shared["services"] = jammed;
    shared["violating_users"] = violating_users;
    r.status = jammed.empty() ? Status::kNotDetected : Status::kDetected;
    r.reason = jammed.empty()
                   ? "no service gets significantly slower with load into a violating load"
                   : std::to_string(jammed.size()) +
                         " service(s) get significantly slower with every violating load step";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_traffic_jam() { return std::make_unique<TrafficJam>(); }

}  // namespace sonde::diagnose::heuristics
