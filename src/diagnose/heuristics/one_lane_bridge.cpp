// One Lane Bridge (thesis H6, queueing-theory strategy, Alg. 14-15): the
// mean response time at a load exceeds what CPU queueing explains
// (M/M/c, Erlang C, c = CPU cores, not nodes as in the thesis'
// pseudo-code): tolerance x (rho_s / c) x C(c, U) / (1 - U) + rho_s, with
// rho_s = max(single-user mean, floor). Then something other than the CPU
// limits concurrency: a lock, a pool of one, a single DB connection.
#include <algorithm>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/stats/descriptive.hpp"
#include "diagnose/stats/erlang.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class OneLaneBridge : public Heuristic {
 public:
  std::string name() const override { return "one_lane_bridge"; }
  std::string title() const override { return "One Lane Bridge"; }
  std::string description() const override {
    return "Under load, requests wait far longer than the CPU load explains: something lets "
           "only one (or few) requests through at a time, like a global lock or a pool of one.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"scaling", "scaling", 5, {"response_time", "cpu"}}};
  }
  std::map<std::string, double> defaults() const override {
    return {{"tolerance", 1.1}, {"single_user_floor_ms", 15}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    if (steps.size() < 2) return not_evaluated("needs a scaling series with >= 2 complete steps");
    std::vector<double> util(steps.size());
    int cores = ctx.settings.cores;
    for (size_t s = 0; s < steps.size(); ++s) {
      std::string error;
      int seen = 0;
      if (!cpu_utilization(*steps[s], &util[s], &seen, &error)) return not_evaluated(error);
      if (ctx.settings.cores == 0) cores = std::max(cores, seen);
    }
    cores = std::max(cores, 1);
    std::vector<std::string> services;
    if (auto it = ctx.ancestors.find("traffic_jam"); it != ctx.ancestors.end()) {
      const nlohmann::json tj = it->second;
      if (tj.contains("services")) services = tj["services"].get<std::vector<std::string>>();
    } else {
      services = steps.back()->services();
    }
    const Experiment* single = ctx.data.single_user_test();
    if (single == nullptr) single = steps.front();
    NodeResult r;
    nlohmann::json chart = nlohmann::json::array();
    int detected = 0;
    for (const std::string& service : services) {
      const std::vector<double> base = single->response_times(service);
      if (base.empty()) continue;
      const double rho_s = std::max(stats::mean(base), ctx.params.at("single_user_floor_ms"));
      bool found = false;
      nlohmann::json points = nlohmann::json::array();
      for (size_t s = 0; s < steps.size(); ++s) {
        if (steps[s]->users <= 1) continue;
        const std::vector<double> rt = steps[s]->response_times(service);
        if (rt.empty()) continue;
        const double measured = stats::mean(rt);
        const double threshold =
            stats::olb_threshold(rho_s, cores, util[s], ctx.params.at("tolerance"));
        const bool over = measured > threshold;
        found = found || over;
        points.push_back({{"users", steps[s]->users}, {"measured", measured},
                          {"threshold", threshold}, {"utilization", util[s]}});
        if (!over) continue;
        Evidence ev;
        ev.location = service;
        ev.test = "mean response time > queueing threshold (Erlang C, " + std::to_string(cores) + " cores)";
        ev.effect_size = measured / threshold;
        ev.effect = "measured / explainable response time";
        ev.data = describe_sample(*steps[s], rt.size()) + ", CPU " + fmt(util[s] * 100) +
                  "%, single-user mean " + fmt(rho_s) + " ms";
        ev.detail = service + " at " + std::to_string(steps[s]->users) + " users: mean " +
                    fmt(measured) + " ms, but CPU queueing at " + fmt(util[s] * 100) +
                    "% utilization explains at most " + fmt(threshold) + " ms";
        ev.values = {{"measured_ms", measured}, {"threshold_ms", threshold},
                     {"utilization", util[s]}, {"cores", cores}};
        r.evidence.push_back(std::move(ev));
      }
      detected += found;
      chart.push_back({{"service", service}, {"points", points}, {"found", found}});
    }
    r.charts["queueing"] = chart;
    r.status = detected > 0 ? Status::kDetected : Status::kNotDetected;
    r.reason = detected > 0 ? std::to_string(detected) + " service(s) wait longer than CPU queueing explains"
                            : "response times are explained by CPU utilization";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_one_lane_bridge() { return std::make_unique<OneLaneBridge>(); }

}  // namespace sonde::diagnose::heuristics
