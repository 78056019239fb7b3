// The Ramp (thesis H3, time-window strategy, Alg. 8): a custom series of
// single-user tests separated by load phases that are not measured (series
// "ramp", steps 1..windows). Detected for a service when its response time
// increases significantly from every window to the next.
//
// The test (parameter `rank_test`):
//  - 2 (default): either test finds the increase: the thesis' test on means
//    (Welch's t-test, one-sided) or Mann-Whitney U (one-sided, with the
//    median or the mean rising). Each misses a kind of ramp the other
//    sees. A window that happens to catch a rare long pause (a GC or
//    stop-the-world hiccup: one 300 ms request among 400 of 5 ms) has its
//    mean dragged up, which hides the next window's increase from the test
//    on means; ranks do not care (scenarios tc07). A ramp whose growth is
//    uneven at short time scales (the ledger's l04: SQLite's write-ahead
//    log slows reads until a checkpoint merges it, so a window's median
//    fell, 9.13 -> 7.88 ms, while its mean rose, 8.75 -> 9.48 ms, Welch p
//    0.0007) is missed by a rule that asks the median to rise. Asking
//    either test at each of the windows - 1 comparisons keeps the false
//    alarm rate of the whole series at most (2 alpha)^(windows - 1),
//    0.001 with the defaults, if the windows are independent.
//  - 1: Mann-Whitney only, with the median rising (sonde's rule until
//    2026-11-28, set for tc07);
//  - 0: the thesis' test on means only (Welch's t-test here).
// Both tests are reported either way.
//
// Only services that violate their requirement (Performance Problem's
// violating services, when the search passes them) are examined: the Ramp
// is a cause of the performance problem in the hierarchy, and a service
// far within its requirement that gets a little slower over time causes
// none (scenario tc12: GET /product 0.34 -> 0.54 ms on a growing
// PostgreSQL database, with 10 ms required).
#include <algorithm>

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
    return {{"windows", 4}, {"min_relative_increase", 0}, {"rank_test", 2}};
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
    std::vector<std::string> services = windows.front()->services();
    if (auto pp = ctx.ancestors.find("performance_problem");
        pp != ctx.ancestors.end() && pp->second.contains("violating_services")) {
      const auto violating = pp->second["violating_services"].get<std::vector<std::string>>();
      std::erase_if(services, [&](const std::string& s) {
        return std::find(violating.begin(), violating.end(), s) == violating.end();
      });
    }
    for (const std::string& service : services) {
      int increases = 0;
      nlohmann::json means = nlohmann::json::array();
      for (size_t w = 0; w < needed; ++w) {
        const std::vector<double> rt = windows[w]->response_times(service);
        const stats::Interval ci = stats::mean_confidence_interval(rt, ctx.settings.alpha);
        means.push_back({windows[w]->step, ci.estimate, ci.low, ci.high});
        if (w == 0) continue;
        const std::vector<double> before = windows[w - 1]->response_times(service);
        const Increase inc =
            test_increase(before, rt, ctx.settings.alpha, ctx.params.at("min_relative_increase"));
        Evidence ev = increase_evidence(inc, service,
                                        "'" + windows[w - 1]->id + "' -> '" + windows[w]->id + "'");
        const std::string between =
            " between windows " + std::to_string(w) + " and " + std::to_string(w + 1);
        bool significant = inc.significant;
        const double rank_test = ctx.params.at("rank_test");
        if (rank_test != 0) {
          const double median_a = before.empty() ? 0 : stats::percentile(before, 0.5);
          const double median_b = rt.empty() ? 0 : stats::percentile(rt, 0.5);
          const double relative = median_a > 0 ? (median_b - median_a) / median_a : 0;
          const bool ranks_rise = rank_test == 1
                                      ? median_b > median_a
                                      : median_b > median_a || inc.test.mean_b > inc.test.mean_a;
          const bool by_ranks = inc.mann_whitney_p < ctx.settings.alpha && ranks_rise &&
                                relative >= ctx.params.at("min_relative_increase");
          significant = by_ranks || (rank_test == 2 && inc.significant);
          ev.test = rank_test == 1 ? "Mann-Whitney U (one-sided, increase)"
                                   : "Mann-Whitney U or Welch's t-test (one-sided, increase)";
          ev.p_value = inc.mann_whitney_p;
          ev.effect_size = relative;
          ev.effect = "relative increase of the median";
          ev.values["median_before"] = median_a;
          ev.values["median_after"] = median_b;
          ev.values["welch_p"] = inc.test.p_greater;
          ev.values["significant"] = significant;
          ev.detail = service + ": median " + fmt(median_a) + " ms -> " + fmt(median_b) +
                      " ms (mean " + fmt(inc.test.mean_a) + " -> " + fmt(inc.test.mean_b) + ")" +
                      between;
        } else {
          ev.detail = service + ": mean " + fmt(inc.test.mean_a) + " ms -> " +
                      fmt(inc.test.mean_b) + " ms" + between;
        }
        ev.detail += significant ? " (significant increase)" : " (no significant increase)";
        increases += significant;
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
