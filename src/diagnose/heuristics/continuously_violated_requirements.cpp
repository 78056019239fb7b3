// Continuously Violated Requirements (thesis H4, bucket strategy, Alg. 9-11):
// buckets of 50 x mean inter-request time (no cap); detected when the
// requirement is violated more than phi of the time.
//
// Beyond the thesis: "of the time" is the estimated time in violation
// (violated_time_share in common.hpp), not the share of violating buckets
// (Alg. 11's eta / |B|). A bucket of 50 requests of a rarely requested
// service spans 0.7 s in the shop's hiccup cases; each pause made one or
// two such buckets violate, and the bucket share of GET /shipping reached
// 8 of 15 although the pauses took about a quarter of the run (scenario
// tc04, run shop-g1-1, a false alarm; fixed after that fresh run). Over
// the stored runs of both systems, the bucket share was 0.31-0.53 in the
// cases without a continuous violation and 0.77-1.0 in those with one;
// the estimate gives 0.20-0.27 and 0.58-1.0.
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
      const double share = violated_time_share(buckets, periods);
      const bool found = share > ctx.params.at("min_violating_share");
      if (found) services.push_back(service);
      Evidence ev;
      ev.location = service;
      ev.test = "bucket strategy: estimated share of the time in violation > " +
                fmt(ctx.params.at("min_violating_share"));
      ev.effect_size = share;
      ev.effect = "estimated share of the time in violation";
      ev.data = describe_sample(*e, series.size()) + ", " + std::to_string(filled) + " buckets";
      ev.detail = service + ": violated an estimated " + fmt(share * 100) + "% of the time (" +
                  std::to_string(violating) + " of " + std::to_string(filled) +
                  " time buckets violate, in " + std::to_string(periods.size()) + " period(s))";
      ev.values = {{"violating_buckets", violating},
                   {"buckets", filled},
                   {"periods", periods.size()},
                   {"share", share},
                   {"found", found}};
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
