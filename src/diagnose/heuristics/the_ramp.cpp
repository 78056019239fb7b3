// The Ramp (thesis H3, time-window strategy, Alg. 6-8): a custom series of
// single-user tests separated by load phases that are not measured (series
// "ramp", steps 1..windows). Detected for a service when its response time
// increases significantly from every window to the next.
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/stats/descriptive.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class TheRamp : public Heuristic {
 public:
  std::string name() const override { return "the_ramp"; }
  std::string title() const override { return "The Ramp"; }
  std::string description() const override {
    return "Response times grow the longer the system runs (e.g. a growing data structure "
           "scanned on every request), independent of the load.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"custom", "ramp", 4, {"response_time"}}};  // single-user windows between load phases
  }
  std::map<std::string, double> defaults() const override {
    return {{"windows", 4}, {"min_relative_increase", 0}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const std::vector<const Experiment*> windows = ctx.data.series("ramp");
    const size_t needed = static_cast<size_t>(ctx.params.at("windows"));
    if (needed < 2) return not_evaluated("parameter 'windows' must be >= 2");
    if (windows.size() < needed) {
      return not_evaluated("needs " + std::to_string(needed) +
                           " complete experiments of series 'ramp', found " +
                           std::to_string(windows.size()));
    }
    NodeResult r;
    int detected = 0;
    nlohmann::json chart = nlohmann::json::array();
    for (const std::string& service : windows.front()->services()) {
      int increases = 0;
      nlohmann::json means = nlohmann::json::array();
      for (size_t w = 0; w < needed; ++w) {
        const std::vector<double> rt = windows[w]->response_times(service);
        const stats::Interval ci = stats::mean_confidence_interval(rt, ctx.settings.alpha);
        means.push_back({windows[w]->step, ci.estimate, ci.low, ci.high});
        if (w == 0) continue;
        const Increase inc =
            test_increase(windows[w - 1]->response_times(service), rt, ctx.settings.alpha,
                          ctx.params.at("min_relative_increase"));
        increases += inc.significant;
        Evidence ev = increase_evidence(inc, service,
                                        "'" + windows[w - 1]->id + "' -> '" + windows[w]->id + "'");
        ev.detail = service + ": mean " + fmt(inc.test.mean_a) + " ms -> " + fmt(inc.test.mean_b) +
                    " ms between windows " + std::to_string(w) + " and " + std::to_string(w + 1) +
                    (inc.significant ? " (significant increase)" : " (no significant increase)");
        r.evidence.push_back(std::move(ev));
      }
      const bool found = increases == static_cast<int>(needed) - 1;
      detected += found;
      chart.push_back({{"service", service}, {"windows", means}, {"found", found}});
    }
    r.charts["ramp"] = chart;
    r.status = detected > 0 ? Status::kDetected : Status::kNotDetected;
    r.reason = detected > 0 ? std::to_string(detected) +
                                  " service(s) get slower from every time window to the next"
                            : "no service gets significantly slower over time";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_the_ramp() { return std::make_unique<TheRamp>(); }

}  // namespace sonde::diagnose::heuristics
