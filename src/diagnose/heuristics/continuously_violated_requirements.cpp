// Continuously Violated Requirements (thesis H4, bucket strategy, Alg. 9-11):
// buckets of 50 x mean inter-request time (no cap); detected when the
// requirement is violated more than phi of the time.
//
// Beyond the thesis: "of the time" is the estimated time in violation
// (violated_time_share in common.hpp). Where a service's violations are
// excursions from a level far below its threshold (violation_regime: the
// threshold lies beyond the compliant buckets' own variation), a run of k
// violating buckets counts its expected length, (k - 1) bucket widths,
// not k: a bucket of 50 requests of a rarely requested service spans 0.7
// s in the shop's hiccup cases, each pause made one or two such buckets
// violate, and the bucket share of GET /shipping reached 8 of 15 although
// the pauses took about a quarter of the run (scenario tc04, run
// shop-g1-1, a false alarm; fixed after that fresh run). Where the
// service's own level sits at the threshold and its buckets flicker across
// it, each violating bucket counts whole, as the thesis counts it (tc15,
// run shop-g2-1: a lock-bound POST /cart violating in 29 of 55 buckets
// was missed when every run counted its expected length; fixed after that
// fresh run).
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class ContinuouslyViolated : public Heuristic {
 public:
  std::string name() const override { return "continuously_violated_requirements"; }
  std::string title() const override { return "Continuously Violated Requirements"; }
  std::string description() const override {
    return "The requirement is violated most of the time under load, not just in bursts: "
           "the system is too slow in general.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"load", "", 1, {"response_time"}}};
  }
  std::map<std::string, double> defaults() const override {
    // phi: no thesis value; 0.5 ("most of the time") is the complement of
    // Application Hiccups' max_hiccup_share, which asks the same estimate.
    return {{"bucket_factor", 50}, {"min_violating_share", 0.5}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"min_violating_share", {ParameterKind::kShare}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const Experiment* e = ctx.data.max_load_test();
    if (e == nullptr) return not_evaluated("no complete load test in the data");
    NodeResult r;
    nlohmann::json services = nlohmann::json::array();
    for (const std::string& service : e->services()) {
      const std::vector<TimedValue> series = timed_response_times(*e, service);
      const Requirement& req = ctx.settings.for_service(service);
      const std::vector<Bucket> buckets =
          make_buckets(series, req, ctx.params.at("bucket_factor"), 0);
      size_t filled = 0;
      size_t violating = 0;
      for (const Bucket& b : buckets) {
        filled += b.count > 0;
        violating += b.violating;
      }
      if (filled == 0) continue;
      const std::vector<ViolatingPeriod> periods = violating_periods(buckets);
      const ViolationRegime regime = violation_regime(
          buckets, req.threshold_ms, ctx.settings.alpha / static_cast<double>(filled));
      const double share = violated_time_share(buckets, periods, regime.excursions);
      const bool found = share > ctx.params.at("min_violating_share");
      if (found) services.push_back(service);
      Evidence ev;
      ev.location = service;
      ev.test = "bucket strategy: estimated share of the time in violation > " +
                fmt(ctx.params.at("min_violating_share"));
      ev.effect_size = share;
      ev.effect = "estimated share of the time in violation";
      ev.data = describe_sample(*e, series.size()) + ", " + std::to_string(filled) + " buckets";
      ev.detail =
          service + ": violated an estimated " + fmt(share * 100) + "% of the time (" +
          std::to_string(violating) + " of " + std::to_string(filled) +
          " time buckets violate, in " + std::to_string(periods.size()) + " period(s)" +
          (violating == 0      ? std::string()
           : regime.excursions ? "; excursions from a level far below the threshold, each period "
                                 "counted by its expected length"
                               : "; each violating bucket counted whole") +
          ")";
      ev.values = {{"violating_buckets", violating},  {"buckets", filled},
                   {"periods", periods.size()},       {"share", share},
                   {"excursions", regime.excursions}, {"found", found}};
      r.evidence.push_back(std::move(ev));
    }
    if (r.evidence.empty())
      return not_evaluated("load test '" + e->id + "' has too few requests for buckets");
    shared["services"] = services;
    r.status = services.empty() ? Status::kNotDetected : Status::kDetected;
    r.reason = services.empty() ? "no service violates its requirement most of the time"
                                : std::to_string(services.size()) +
                                      " service(s) violate their requirement continuously";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_continuously_violated_requirements() {
  return std::make_unique<ContinuouslyViolated>();
}

}  // namespace sonde::diagnose::heuristics
