// Continuously Violated Requirements (thesis H4): detected when the
// requirement is violated more than phi of the time under load, not just
// in bursts.
//
// Beyond the thesis: "of the time" is measured without buckets. The
// thesis (Alg. 9-11) cuts the load test into buckets of 50 x the mean
// inter-request time and counts the buckets whose percentile violates.
// Each bucket's percentile comes from about 50 requests, so a service
// whose level sits at its threshold violates in a share of buckets that
// depends on their width: the share crossed phi between 1x and 2x the
// width in the sensitivity studies (tc03, tc04, l03 at 2x; parameters.md),
// and missed the N+1 queries of tc12e in run shop-g4-2 (10 of 30 buckets, while the
// requests' own violation rate rose from 5.9% to 13% after 4 s of the
// 10-s test). Two earlier repairs of the bucket count (each violating
// period counted by its expected length where violations are excursions;
// every violating bucket counted whole where the level sits at the
// threshold; tc04 and tc15, 2026-12-05) were rules about buckets too.
// Now the requests are segmented where the share exceeding the threshold
// changes significantly (violated_time in common.hpp; each kind of cut at
// alpha / 2 over its candidates, Fisher's exact p-value). A segment
// violates where more than 1 - percentile of its requests exceed the
// threshold, and the decision counts the time of the segments whose
// violation is significant for their own requests (share_low), so that a
// service whose requests sit at the threshold is not called continuously
// violated by a coin flip. Application Hiccups asks the complement, the
// estimated time in violation (share) under its 0.5.
//
// The exhaustive split (`exhaustive_split` 1 or 2; 2 is the default of
// the set after 9bc852f): the two tests left a gap.
// A service whose violation over the whole load test is significant, but
// which is neither significantly violated most of the time nor has
// recurring hiccups, fell through both, and the search stopped above
// Traffic Jam (scenario tc12e, N+1 queries on SQLite: 239 of 1,440
// requests over 10 ms against 10% allowed, significantly violated 44% of
// the time, 0 hiccups; in three runs of the case at two parameter sets
// 33%, 53% and 44%). With the switch on, such a service is continuously
// violated unless an evaluated Application Hiccups sibling says hiccups
// explain it: the load test's violation is a problem, the hiccups are the
// one shape that is not a general slowness, and the causes below (Traffic
// Jam and its children) are left to decide. Which hiccups count:
//  - 1 (set 9bc852f's default): the service's own. The sensitivity
//    studies of six fresh runs showed that claim fragile: at half and
//    twice Application Hiccups' `bucket_factor`, and at twice its
//    `min_hiccups`, some services of the hiccup cases (tc03-tc05) were not
//    claimed one by one while the node still found hiccups, and the split
//    called them continuously violated (false alarms). A pause slows every
//    service with requests in it; whether a service with few requests
//    shows enough violating buckets of its own is chance.
//  - 2 (the default since the set after 9bc852f): the system's. If Application
//    Hiccups found hiccups in any service, the split is not taken: the
//    significant overall violations of the others are most likely the
//    same pauses, seen in too few requests. The node's own decision is
//    the one its sensitivity showed on a plateau.
// "Significant over the whole test":
// of its n requests, c exceed the threshold, and under "the requirement
// is met" c ~ Binomial(n, 1 - percentile); P(X >= c) < alpha. The
// requests are not independent (a slow period slows its neighbours), so
// the test is optimistic; the hiccup claim and Traffic Jam's own tests
// stand between it and a root cause.
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "stats/binomial.hpp"

namespace sonde::diagnose::heuristics {
namespace {

// The services an evaluated Application Hiccups sibling found hiccups in;
// null when none was evaluated before this node.
const nlohmann::json* hiccup_claims(const Context& ctx) {
  if (ctx.siblings == nullptr) return nullptr;
  auto it = ctx.siblings->find("application_hiccups");
  if (it == ctx.siblings->end() || !it->second.contains("services")) return nullptr;
  return &it->second["services"];
}

bool claims(const nlohmann::json& services, const std::string& service) {
  for (const nlohmann::json& s : services) {
    if (s.is_string() && s.get<std::string>() == service) return true;
  }
  return false;
}

class ContinuouslyViolated : public Heuristic {
 public:
  std::string name() const override { return "continuously_violated_requirements"; }
  std::string title() const override { return "Continuously Violated Requirements"; }
  std::string description() const override {
    return "The requirement is violated under load in general, not just in bursts: most of "
           "the time, or significantly over the whole load test without hiccups. The system "
           "is too slow in general.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"load", "", 1, {"response_time"}}};
  }
  std::map<std::string, double> defaults() const override {
    // phi: no thesis value; 0.5 ("most of the time") is the complement of
    // Application Hiccups' max_hiccup_share, which compares the point estimate.
    // exhaustive_split: 0 is the thesis' rule; 1 (set 9bc852f) splits on the
    // service's own hiccups, 2 (the default since) on the system's (above).
    return {{"min_violating_share", 0.5}, {"exhaustive_split", 2}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"min_violating_share", {ParameterKind::kShare}},
            {"exhaustive_split", {ParameterKind::kSwitch, 3}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const Experiment* e = ctx.data.max_load_test();
    if (e == nullptr) return not_evaluated("no complete load test in the data");
    NodeResult r;
    nlohmann::json services = nlohmann::json::array();
    // 0, 1 or 2: the evaluation checks a switch's value before it calls.
    const int split_rule = static_cast<int>(ctx.params.at("exhaustive_split"));
    const bool exhaustive = split_rule != 0;
    const nlohmann::json* hiccups = hiccup_claims(ctx);
    const bool system_has_hiccups = hiccups != nullptr && !hiccups->empty();
    for (const std::string& service : e->services()) {
      const std::vector<TimedValue> series = timed_response_times(*e, service);
      if (series.empty()) continue;
      const Requirement& req = ctx.settings.for_service(service);
      const ViolatedTime violated = violated_time(series, req, ctx.settings.alpha);
      // Decided on the significant violations: a service whose requests sit
      // at the threshold is not "violated most of the time" by a coin flip.
      const bool most_of_the_time = violated.share_low > ctx.params.at("min_violating_share");
      size_t over = 0;
      for (const TimedValue& tv : series) over += tv.value > req.threshold_ms;
      const double overall_p = stats::binomial_upper_tail(over, series.size(), 1 - req.percentile);
      const bool overall_significant = overall_p < ctx.settings.alpha;
      // Whether hiccups explain the service's violation: rule 1 its own,
      // rule 2 any service's. A service violated most of the time is not a
      // hiccup's (Hiccups needs under half; under rule 1 the two cannot meet).
      const bool own_hiccups = hiccups != nullptr && claims(*hiccups, service);
      const bool claimed = split_rule == 2 ? system_has_hiccups && !most_of_the_time : own_hiccups;
      const bool split =
          exhaustive && !most_of_the_time && overall_significant && hiccups != nullptr && !claimed;
      const bool found = most_of_the_time || split;
      if (found) services.push_back(service);
      Evidence ev;
      ev.location = service;
      ev.test = "share of the time in significant violation (stretches of constant rate) > " +
                fmt(ctx.params.at("min_violating_share"));
      ev.effect_size = violated.share_low;
      ev.effect = "share of the time in significant violation";
      ev.data = describe_sample(*e, series.size());
      ev.detail = service + ": " + describe_violated_time(violated, req);
      if (exhaustive && !most_of_the_time) {
        ev.detail +=
            "; over the whole test " + std::to_string(over) + " of " +
            std::to_string(series.size()) + " requests over " + fmt(req.threshold_ms) + " ms (p " +
            fmt(overall_p) + " against " + fmt((1 - req.percentile) * 100) + "% allowed)" +
            (!overall_significant ? ": not a significant violation"
             : hiccups == nullptr
                 ? ": significant, but no Application Hiccups was evaluated before to "
                   "tell hiccups apart"
             : own_hiccups ? ": significant, and Application Hiccups claims it"
             : claimed     ? ": significant, and Application Hiccups found hiccups in " +
                             std::to_string(hiccups->size()) + " other service(s), which explain it"
                       : ": significant and not hiccups, so continuously violated");
      }
      nlohmann::json segments = nlohmann::json::array();
      for (const ViolationSegment& s : violated.segments) {
        segments.push_back({{"start_ns", s.start_ns},
                            {"end_ns", s.end_ns},
                            {"requests", s.requests},
                            {"over_threshold", s.over},
                            {"violated", s.violated},
                            {"significant", s.significant}});
      }
      ev.values = {{"share", violated.share},
                   {"share_low", violated.share_low},
                   {"share_high", violated.share_high},
                   {"segments", segments},
                   {"over_threshold", over},
                   {"requests", series.size()},
                   {"overall_p", overall_p},
                   {"claimed_by_hiccups", claimed},
                   {"own_hiccups", own_hiccups},
                   {"found_by", most_of_the_time ? "share"
                                : split          ? "exhaustive_split"
                                                 : ""},
                   {"found", found}};
      r.evidence.push_back(std::move(ev));
    }
    if (r.evidence.empty())
      return not_evaluated("load test '" + e->id + "' has no successful request");
    shared["services"] = services;
    r.status = services.empty() ? Status::kNotDetected : Status::kDetected;
    r.reason = services.empty() ? "no service violates its requirement most of the time" +
                                      std::string(exhaustive && hiccups != nullptr
                                                      ? ", nor significantly other than in "
                                                        "hiccups"
                                                      : "")
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
