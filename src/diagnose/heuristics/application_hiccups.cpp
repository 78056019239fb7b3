// Application Hiccups (thesis H2, bucket strategy, Alg. 3-5): response
// times violate the requirement in bursts, not all the time. Buckets of
// width min(50 x mean inter-request time, 5 s); a hiccup runs from the left
// border of a violating bucket to the right border of the next compliant
// bucket; detected when hiccups exist and take less than phi of the time
// (here: when the requirement is violated less than phi of the time, below).
//
// Beyond the thesis: violations that pile up towards one end of the run
// are a trend, not hiccups. A ramp that crosses the threshold late in the
// load test flickers around it (scenario tc06: bucket P90s rising from 1 to
// 16 ms made 7 "hiccups" covering 48% of the time), although the thesis
// counts its ramp cases as hiccup negatives. The test (`trend_test` 1) is a
// permutation test on the mean position of the violating buckets among the
// non-empty ones (stats/position_test.hpp): the violations follow a trend
// when they sit off-centre with p < alpha. It asks where the violations
// are, not whether the level drifts, so pauses on a slowly rising baseline
// stay hiccups. Until 2026-11-28 the rule was Spearman |rho| >= 0.6, a
// threshold placed between the scenarios' hiccup cases (|rho| <= 0.17) and
// ramps (0.74-0.80); rho is still reported (`trend_rho`).
//
// Also beyond the thesis: a hiccup stands out (`peak_test` 1). A service
// whose normal level sits just under the threshold flickers across it
// under load (scenario tc14: a saturated database, GET /product's bucket
// P90s 10-13.6 ms against a typical 7.5 ms). A violating period counts
// only when both hold, each at alpha / (non-empty buckets), since any
// bucket could have been the candidate:
//  (a) the violation is significant for its own requests: of its m
//      requests, c exceed the threshold; under "the period meets the
//      requirement" c ~ Binomial(m, 1 - percentile), so P(X >= c) must be
//      below the level. A P90 just above the threshold in a bucket of 50
//      requests is not;
//  (b) its worst bucket lies outside the service's own bucket-to-bucket
//      variation: on a log scale, above the median of the compliant
//      buckets' percentiles by more than t(1 - level, compliant - 1)
//      robust standard deviations (1.4826 x the median absolute
//      deviation); skipped with fewer than 3 compliant buckets.
//      The compliant buckets are those cut off at the threshold. Where
//      the threshold lies within that many of their own standard
//      deviations of their median, the cut is inside their variation and
//      their spread understates it; then the median and scale come from
//      all non-empty buckets (the MAD tolerates up to half of them being
//      hiccups). Added 2026-12-05 after a false alarm in a fresh run (tc14,
//      shop-g1-1: GET /product's bucket P90s 8-20 ms against 10 ms, ten
//      compliant buckets between 8 and 10; flickers at 13.7 and 18.5 ms
//      stood 6 and 10 of their standard deviations out). Pauses on a level
//      far below the threshold keep the compliant buckets' scale, however
//      many buckets they make violate.
// In the hiccup cases (tc03-tc05) every pause peaks 58 to 1226 times above
// the typical level. Until 2026-12-02 the rule was a peak of 3 x the
// typical level (min_peak_factor, set for tc14's flickers at 1.8x).
//
// The time share phi compares is the estimated time in violation, hiccup
// or flicker, from the stretches of constant violation rate Continuously
// Violated Requirements asks too (violated_time in common.hpp; why, in
// continuously_violated_requirements.cpp), against the same 0.5. Not the
// time not significantly compliant (share_high), the mirror of CVR's
// share_low: under a P99 requirement a stretch of 150 requests with none
// over the threshold is not significantly compliant (0.99^150 = 0.22), so
// pauses a few hundred requests apart would never be hiccups
// (ViolatedTime.PausesOfARarelyRequestedServiceAreHiccupsNotContinuousViolation
// fails with it). The thesis measures
// each hiccup from the left border of its first violating bucket to the
// right border of the next compliant one, which adds up to two bucket
// widths per hiccup; with a rarely requested service's buckets of 0.7 s
// that made four pauses "continuous" (tc03, tc04: 53-78% of the time).
// The peak tests decide which periods are hiccups, not whether the
// requirement is violated most of the time: a service that flickers
// across its threshold for most of the run violates it continuously,
// whatever a few of its periods look like. The reported hiccups keep the
// thesis' extent (start_ns, end_ns).
//
// And hiccups recur: the thesis defines them as violations in periodic
// time frames (frequency, amplitude, duration; Sec. 4.4.2), although its
// Alg. 3 accepts a single hiccup (DynamicSpotter's code asks for more
// than one). One violating period in a load test is a blip, not a
// period: `min_hiccups` 2, the smallest count that recurs (a derivation
// since 2026-12-02; first set for scenario tc15, a table lock, run sc19,
// where GET /orders had one bucket of 22 at 14.5 ms against a typical
// 3.8 ms; the hiccup cases tc03-tc05 have 3 to 5 per service).
#include <algorithm>
#include <cmath>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "stats/binomial.hpp"
#include "stats/descriptive.hpp"
#include "stats/position_test.hpp"
#include "stats/regression.hpp"
#include "stats/t_test.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class ApplicationHiccups : public Heuristic {
 public:
  std::string name() const override { return "application_hiccups"; }
  std::string title() const override { return "Application Hiccups"; }
  std::string description() const override {
    return "Response times are fine most of the time but violate the requirement in short "
           "periods (e.g. garbage collection, periodic jobs, stop-the-world pauses).";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"load", "", 1, {"response_time"}}};
  }
  std::map<std::string, double> defaults() const override {
    // phi (max_hiccup_share): the thesis gives no value; 0.5 is sonde's
    // (less than half of the run). Its nopCommerce remark (Sec. 7.3.2: no
    // hiccups where violations exceed 50% of the requests) concerns
    // requests, not hiccup time.
    return {{"bucket_factor", 50}, {"bucket_cap_s", 5}, {"max_hiccup_share", 0.5},
            {"trend_test", 1},     {"peak_test", 1},    {"min_hiccups", 2}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"max_hiccup_share", {ParameterKind::kShare}},
            {"peak_test", {ParameterKind::kSwitch}},
            {"trend_test", {ParameterKind::kSwitch}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const Experiment* e = ctx.data.max_load_test();
    if (e == nullptr) return not_evaluated("no complete load test in the data");
    NodeResult r;
    nlohmann::json timelines = nlohmann::json::array();
    nlohmann::json claimed = nlohmann::json::array();  // services with hiccups
    int detected = 0;
    for (const std::string& service : e->services()) {
      const std::vector<TimedValue> series = timed_response_times(*e, service);
      const Requirement& req = ctx.settings.for_service(service);
      const std::vector<Bucket> buckets = make_buckets(series, req, ctx.params.at("bucket_factor"),
                                                       ctx.params.at("bucket_cap_s") * 1e9);
      if (buckets.empty()) continue;
      size_t non_empty = 0;
      for (const Bucket& b : buckets) non_empty += b.count > 0;
      // The level of each test: alpha over the buckets that could have
      // been the candidate. (b)'s quantile is Student's t with the
      // scale's buckets - 1 df: the scale is estimated from them.
      const double level = ctx.settings.alpha / static_cast<double>(std::max<size_t>(1, non_empty));
      const ViolationRegime regime = violation_regime(buckets, req.threshold_ms, level);
      const BucketLevel& normal = regime.scale;
      const double z = regime.scale_z;
      const double typical = normal.typical_ms;
      const bool peak_test = ctx.params.at("peak_test") != 0;
      const std::vector<ViolatingPeriod> periods = violating_periods(buckets);
      nlohmann::json hiccups = nlohmann::json::array();
      size_t flickers = 0;                  // violating periods that do not stand out
      size_t flickers_not_significant = 0;  // ... of them, failing test (a)
      for (const ViolatingPeriod& period : periods) {
        double peak = 0;
        for (size_t k = period.first; k <= period.last; ++k) {
          if (buckets[k].count > 0) peak = std::max(peak, buckets[k].percentile_ms);
        }
        // The thesis' extent: to the right border of the next compliant bucket.
        size_t next = period.last + 1;
        while (next < buckets.size() && buckets[next].count == 0) ++next;
        const int64_t end = next < buckets.size() ? buckets[next].end_ns : buckets.back().end_ns;
        const int64_t start = buckets[period.first].start_ns;
        const int64_t violating_end = buckets[period.last].end_ns;
        // (a) the period's own requests: how many exceed the threshold.
        size_t m = 0, over = 0;
        for (const TimedValue& tv : series) {
          if (tv.time_ns < start || tv.time_ns >= violating_end) continue;
          ++m;
          over += tv.value > req.threshold_ms;
        }
        const double p_violation = stats::binomial_upper_tail(over, m, 1 - req.percentile);
        // (b) the peak against the buckets' variation; skipped (passes)
        // with fewer than 3 compliant buckets; with no spread at all (MAD
        // 0) any peak above their median stands out.
        const bool judged = peak > 0 && normal.buckets >= 3;
        const double peak_z = !judged ? 0
                              : normal.log_sigma > 0
                                  ? (std::log(peak) - normal.log_median) / normal.log_sigma
                                  : (std::log(peak) > normal.log_median ? INFINITY : 0);
        const bool significant = p_violation < level;
        const bool outside = !judged || peak_z > z;
        if (peak_test && !(significant && outside)) {
          ++flickers;
          flickers_not_significant += !significant;
          continue;
        }
        hiccups.push_back({{"start_ns", start},
                           {"end_ns", end},
                           {"estimated_ms", period.estimated_ns / 1e6},
                           {"peak_ms", peak},
                           {"requests", m},
                           {"over_threshold", over},
                           {"p_violation", p_violation},
                           // null: not judged, or no spread to measure by
                           {"peak_z", judged && std::isfinite(peak_z) ? nlohmann::json(peak_z)
                                                                      : nlohmann::json()}});
      }
      const ViolatedTime violated = violated_time(series, req, ctx.settings.alpha);
      const double share = violated.share;
      std::vector<double> at, violates;
      std::vector<bool> marked;
      for (const Bucket& b : buckets) {
        if (b.count == 0) continue;
        at.push_back(static_cast<double>(b.start_ns));
        violates.push_back(b.violating ? 1 : 0);
        marked.push_back(b.violating);
      }
      const double trend = stats::spearman_rho(at, violates);
      const stats::PositionTest position = stats::position_test(marked);
      const bool trending = ctx.params.at("trend_test") != 0 && position.valid &&
                            position.p_value < ctx.settings.alpha;
      const bool recurring =
          static_cast<double>(hiccups.size()) >= std::max(1.0, ctx.params.at("min_hiccups"));
      const bool found = recurring && share < ctx.params.at("max_hiccup_share") && !trending;
      if (found) {
        ++detected;
        claimed.push_back(service);
      }
      Evidence ev;
      ev.location = service;
      ev.test = "bucket strategy; share of the time in violation (stretches of constant rate) < " +
                fmt(ctx.params.at("max_hiccup_share"));
      ev.effect_size = share;
      ev.effect = "estimated share of the experiment in violation";
      ev.data = describe_sample(*e, series.size()) + ", " + std::to_string(buckets.size()) +
                " buckets of " +
                fmt(static_cast<double>(buckets[0].end_ns - buckets[0].start_ns) / 1e6) + " ms";
      ev.detail =
          service + ": " + std::to_string(hiccups.size()) + " hiccup(s); the requirement is " +
          describe_violated_time(violated, req) +
          (found ? ""
           : share >= ctx.params.at("max_hiccup_share")
               ? std::string(" (violated most of the time by the estimate: not hiccups)")
           : hiccups.empty()
               ? (flickers > 0
                      ? " (" + std::to_string(flickers) + " violating period(s) (" +
                            std::to_string(flickers_not_significant) +
                            " not significant for their own requests, the others not outside "
                            "the service's bucket-to-bucket variation; typical " +
                            fmt(typical) + " ms, level " + fmt(level) +
                            "): noise around the threshold, not hiccups)"
                      : std::string(" (no violating period)"))
           : trending ? std::string(" (the violations pile up towards the ") +
                            (position.mean_position > 0.5 ? "end" : "start") +
                            " of the run: mean position " + fmt(position.mean_position) +
                            " of the buckets, p " + fmt(position.p_value) +
                            " against random placement; a trend, not hiccups)"
                      : " (fewer than " + fmt(ctx.params.at("min_hiccups")) +
                            ": a single blip, hiccups recur)");
      ev.values = {{"hiccups", hiccups},
                   {"share", share},
                   {"share_low", violated.share_low},
                   {"share_high", violated.share_high},
                   {"periods", periods.size()},
                   {"trend_rho", trend},
                   {"trend_position", position.mean_position},
                   {"trend_p", position.p_value},
                   {"typical_ms", typical},
                   {"flickers", flickers},
                   {"found", found},
                   {"scale_from", normal.all_buckets ? "all buckets" : "compliant buckets"}};
      r.evidence.push_back(std::move(ev));
      nlohmann::json points = nlohmann::json::array();
      for (const Bucket& b : buckets) {
        if (b.count > 0) points.push_back({b.start_ns, b.end_ns, b.percentile_ms, b.violating});
      }
      timelines.push_back({{"service", service},
                           {"threshold_ms", req.threshold_ms},
                           {"buckets", points},
                           {"hiccups", hiccups}});
    }
    if (r.evidence.empty())
      return not_evaluated("load test '" + e->id + "' has too few requests for buckets");
    r.charts["hiccup_timeline"] = timelines;
    // For Continuously Violated Requirements' exhaustive split.
    shared["services"] = claimed;
    r.status = detected > 0 ? Status::kDetected : Status::kNotDetected;
    r.reason = detected > 0 ? std::to_string(detected) + " service(s) have hiccups"
                            : "no service has short violating periods";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_application_hiccups() {
  return std::make_unique<ApplicationHiccups>();
}

}  // namespace sonde::diagnose::heuristics
