// Performance Problem (thesis H1, Alg. 2): in the load test at maximum
// load, does any service's response-time percentile exceed its requirement?
#include <algorithm>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "stats/descriptive.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class PerformanceProblem : public Heuristic {
 public:
  std::string name() const override { return "performance_problem"; }
  std::string title() const override { return "Performance Problem"; }
  std::string description() const override {
    return "Under the maximum load, at least one service is slower than its requirement.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"load", "", 1, {"response_time"}}};
  }
  std::map<std::string, double> defaults() const override { return {}; }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const Experiment* e = ctx.data.max_load_test();
    if (e == nullptr) return not_evaluated("no complete load test in the data");
    NodeResult r;
    nlohmann::json violators = nlohmann::json::array();
    nlohmann::json cdfs = nlohmann::json::array();
    for (const std::string& service : e->services()) {
      std::vector<double> rt = e->response_times(service);
      if (rt.empty()) continue;
      std::sort(rt.begin(), rt.end());
      const Requirement& req = ctx.settings.for_service(service);
      const double v = stats::percentile_sorted(rt, req.percentile);
      const bool violated = v > req.threshold_ms;
      Evidence ev;
      ev.location = service;
      ev.test =
          "P" + fmt(req.percentile * 100) + " of response times > " + fmt(req.threshold_ms) + " ms";
      ev.effect_size = v / req.threshold_ms;
      ev.effect = "percentile / threshold";
      ev.data = describe_sample(*e, rt.size());
      ev.detail = service + ": " + fmt(req.percentile * 100) + "% of requests finish within " +
                  fmt(v) + " ms; required " + fmt(req.threshold_ms) + " ms" +
                  (violated ? " (violated)" : " (met)");
      ev.values = {{"percentile_ms", v},
                   {"threshold_ms", req.threshold_ms},
                   {"percentile", req.percentile},
                   {"violated", violated}};
      if (violated) violators.push_back(service);
      r.evidence.push_back(std::move(ev));
      nlohmann::json points = nlohmann::json::array();
      const size_t n = rt.size();
      for (size_t k = 0; k <= 50; ++k) {
        const size_t i = std::min(n - 1, k * (n - 1) / 50);
        points.push_back({rt[i], static_cast<double>(i + 1) / static_cast<double>(n)});
      }
      cdfs.push_back({{"service", service},
                      {"threshold_ms", req.threshold_ms},
                      {"percentile", req.percentile},
                      {"points", points}});
    }
    if (r.evidence.empty())
      return not_evaluated("load test '" + e->id + "' has no successful requests");
    r.charts["cdf"] = cdfs;
    shared["violating_services"] = violators;
    r.status = violators.empty() ? Status::kNotDetected : Status::kDetected;
    r.reason = violators.empty()
                   ? "every service meets its requirement at " + std::to_string(e->users) + " users"
                   : std::to_string(violators.size()) +
                         " service(s) violate their requirement at " + std::to_string(e->users) +
                         " users";
    // Violators first: that is what the reader looks at.
    std::stable_sort(
        r.evidence.begin(), r.evidence.end(),
        [](const Evidence& a, const Evidence& b) { return a.effect_size > b.effect_size; });
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_performance_problem() {
  return std::make_unique<PerformanceProblem>();
}

}  // namespace sonde::diagnose::heuristics
