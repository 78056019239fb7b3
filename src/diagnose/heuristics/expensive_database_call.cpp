// Expensive Database Call (thesis H9, Alg. 19, Eq. 6.26): for a service
// zeta that violates its requirement under load, with mean response time
// rho alone and phi under load, a query eta it issues is expensive iff one
// call of it takes a share v_h / phi > tau of the service's response time
// under load, and that share grew from the single-user test: v_h / phi >
// v_s / rho (v = the query's mean time per call).
//
// sonde's addition (not the thesis'): a query whose one call takes at least
// `dominant_share` of the service's response time at every load (alone and
// under load) is expensive too, whether or not its share grew: a full scan
// that is slow already with one user stays the place to look, while the
// thesis' growth condition would pass it over when the rest of the request
// slows down a little more under load.
//
// sonde's second addition (`growth_rule` 1, the default since the
// thirty-fifth session; 0 restores the rules above alone): a query is
// expensive also when one call's growth from the single-user test to the
// load test, at the lower bound of its mean under load, is more than
// `min_share` of its service's growth in mean response time: the call is
// most of the slowdown, which is the thesis' question (where does the
// violation come from) asked of the growth rather than of the total.
// Written after shop-bound-2's tc15 (a locked statement: 4 % of POST /cart
// alone, 55 % under load with a lower bound of 0.489, so Eq. 6.26 missed it
// at tau 0.5), so it is a fix after a validation, adopted before a new
// series of fresh repetitions. On the stored runs of both systems (a
// training observation) this growth share, taken at the call's mean, was
// 0.90-1.86 where Expensive Database Call is labelled a positive and
// 0.00-0.16 where it is a negative (docs/diagnose/parameters.md).
//
// Per call and per service, as the thesis writes it: a request that issues
// one statement 100 times (The Stifle) has no single expensive call, and a
// query in another service does not count against this one. Requests are
// attributed to services through their traces (request_services.hpp); the
// query's DatabaseCall records carry the trace id.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/heuristics/request_services.hpp"
#include "diagnose/heuristics/sql_shape.hpp"
#include "stats/descriptive.hpp"
#include "stats/t_test.hpp"

namespace sonde::diagnose::heuristics {
namespace {

struct QueryTime {
  size_t calls = 0;
  double total_ms = 0;
  std::vector<double> durations_ms;  // in log order, for the mean's error
  std::set<size_t> requests;         // the service's requests that issued it
  std::set<size_t> unambiguous;      // ... of them, matched with no choice
  double mean_ms() const { return calls == 0 ? 0 : total_ms / static_cast<double>(calls); }
  // The one-sided lower 1 - alpha confidence bound of the mean call time:
  // from batch means where there are enough calls (the calls of one
  // request and of neighbouring requests are correlated), else as if
  // independent (stats::series_mean_error); nullopt with fewer than 2
  // calls, whose mean has no error to test against.
  std::optional<double> mean_low_ms(double alpha) const {
    const stats::MeanError e = stats::series_mean_error(durations_ms);
    if (calls < 2 || e.df < 1) return std::nullopt;
    return mean_ms() - stats::student_t_quantile(1 - alpha, e.df) * e.se;
  }
};

// service -> query shape -> its calls in that service's requests.
using QueriesPerService = std::map<std::string, std::map<std::string, QueryTime>>;

QueriesPerService queries_per_service(const LogRecords& recs, const RequestServices& services) {
  QueriesPerService out;
  for (const LogRecord& r : recs.records) {
    auto it = services.service_of_trace.find(r.trace_id);
    if (it == services.service_of_trace.end()) continue;  // background work, not a request
    QueryTime& q = out[it->second][sql_shape(r.text("sqlStatement"))];
    ++q.calls;
    const double ms = std::max(0.0, r.number("duration")) / 1e6;
    q.total_ms += ms;
    q.durations_ms.push_back(ms);
    if (auto req = services.request_of_trace.find(r.trace_id);
        req != services.request_of_trace.end()) {
      q.requests.insert(req->second);
      if (!services.ambiguous_requests.count(req->second)) q.unambiguous.insert(req->second);
    }
  }
  return out;
}

// Each service's matched requests, and of them the ambiguous ones.
struct ServiceRequests {
  size_t matched = 0;
  size_t ambiguous = 0;
};

std::map<std::string, ServiceRequests> requests_per_service(const RequestServices& s) {
  std::map<std::string, ServiceRequests> out;
  std::set<size_t> seen;
  for (const auto& [trace, request] : s.request_of_trace) {
    if (!seen.insert(request).second) continue;  // child traces share their root's request
    ServiceRequests& r = out[s.service_of_trace.at(trace)];
    ++r.matched;
    r.ambiguous += s.ambiguous_requests.count(request);
  }
  return out;
}

// 0 rather than stats::mean's NaN for no values: a share of nothing.
double mean(const std::vector<double>& v) { return v.empty() ? 0 : stats::mean(v); }

// Why the attribution of requests to traces cannot be trusted, or "".
std::string attribution_problem(const Experiment& e, const RequestServices& s, double min_share) {
  if (!s.error.empty()) return s.error;
  if (s.requests == 0) return "experiment '" + e.id + "' has no successful request";
  if (static_cast<double>(s.matched) < min_share * static_cast<double>(s.requests)) {
    return "only " + std::to_string(s.matched) + " of " + std::to_string(s.requests) +
           " requests of '" + e.id +
           "' ran around a monitored trace (is the request handler monitored?)";
  }
  return "";
}

// How the requests found their traces, for the reason: "'load-u12': 8048
// of 8048 requests attributed to their trace (7990 with one trace inside)".
std::string attribution_text(const Experiment& e, const RequestServices& s) {
  return "'" + e.id + "': " + std::to_string(s.matched) + " of " + std::to_string(s.requests) +
         " requests attributed to their trace (" + std::to_string(s.unambiguous) +
         " with one trace inside)";
}

class ExpensiveDatabaseCall : public Heuristic {
 public:
  std::string name() const override { return "expensive_database_call"; }
  std::string title() const override { return "Expensive Database Call"; }
  std::string description() const override {
    return "One query takes a large part of its service's response time, one that grows under "
           "load, dominates at every load or is most of the service's slowdown under load (full "
           "table scan, temporary tables, missing index, a lock held across the call).";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"single_user", "", 1, {"response_time", "database"}},
            {"load", "", 1, {"response_time", "database"}}};
  }
  std::map<std::string, double> defaults() const override {
    // tau: no thesis value; 0.5 = one call takes most of its service's
    // response time. In scenario tc11 (many different statements, a thesis
    // negative) the congested server slowed BEGIN to 33% of POST /order;
    // on the stored runs the guilty statements took 0.58-1.00 where found
    // (tc15 the lowest, 0.55 with a lower bound of 0.489 where missed),
    // negatives at most 0.43 (docs/diagnose/parameters.md). min_attributed:
    // the share of requests that must be found in the traces for the
    // per-service split to mean anything.
    // dominant_share (sonde's own): one call's share at every load (alone
    // and under load) from which it is expensive without growing: the
    // majority of the service's time, as min_share. Whether a statement is
    // one of a service's queries at all is a binomial test against wrong
    // trace matches (misattribution_p, alpha); until 2026-12-02 a
    // statement needed min_calls 5 calls, set for tc11.
    return {
        {"min_share", 0.5}, {"min_attributed", 0.5}, {"dominant_share", 0.5}, {"growth_rule", 1}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"dominant_share", {ParameterKind::kShare}},
            {"growth_rule", {ParameterKind::kSwitch}},
            {"min_attributed", {ParameterKind::kShare}},
            {"min_share", {ParameterKind::kShare}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const Experiment* single = ctx.data.single_user_test();
    const Experiment* load = ctx.data.max_load_test();
    if (single == nullptr || load == nullptr)
      return not_evaluated("needs a single-user test and a load test");
    for (const Experiment* e : {single, load}) {
      if (!e->has_probe("database"))
        return not_evaluated("experiment '" + e->id + "' ran without the database probe");
      if (!e->has_probe("response_time"))
        return not_evaluated("experiment '" + e->id +
                             "' ran without the response_time probe (no traces)");
    }
    const LogRecords& rs = log_records(*single, "sonde.record.DatabaseCall");
    const LogRecords& rl = log_records(*load, "sonde.record.DatabaseCall");
    if (!rs.error.empty()) return not_evaluated(rs.error);
    if (!rl.error.empty()) return not_evaluated(rl.error);
    const RequestServices& ss = request_services(*single);
    const RequestServices& sl = request_services(*load);
    for (const auto& [e, s] : {std::pair{single, &ss}, std::pair{load, &sl}}) {
      const std::string problem = attribution_problem(*e, *s, ctx.params.at("min_attributed"));
      if (!problem.empty()) return not_evaluated(problem);
    }
    const std::vector<std::string> violating = violating_services(*load, ctx.settings);
    if (violating.empty()) {
      NodeResult r;
      r.status = Status::kNotDetected;
      r.reason = "no service violates its requirement in '" + load->id + "'";
      return r;
    }
    const QueriesPerService qs = queries_per_service(rs, ss);
    const QueriesPerService ql = queries_per_service(rl, sl);
    const std::map<std::string, ServiceRequests> requests_l = requests_per_service(sl);
    size_t matched_all = 0;
    for (const auto& [name, n] : requests_l) matched_all += n.matched;
    // How many requests of all services issue each statement under load.
    std::map<std::string, size_t> issuing_all;
    for (const auto& [name, queries] : ql)
      for (const auto& [shape, q] : queries) issuing_all[shape] += q.requests.size();
    size_t misattributed = 0;
    const double tau = ctx.params.at("min_share");
    const double dominant = ctx.params.at("dominant_share");
    const bool growth_rule = ctx.params.at("growth_rule") != 0;
    NodeResult r;
    // The queries checked and found not expensive: shown after the
    // findings, so a reader sees why (docs/diagnose/report.md).
    std::vector<Evidence> checked;
    for (const std::string& service : violating) {
      const double rho = mean(single->response_times(service));
      const double phi = mean(load->response_times(service));
      auto queries = ql.find(service);
      if (phi <= 0 || queries == ql.end()) continue;
      for (const auto& [shape, h] : queries->second) {
        const QueryTime* s = nullptr;
        if (auto si = qs.find(service); si != qs.end()) {
          if (auto q = si->second.find(shape); q != si->second.end()) s = &q->second;
        }
        // A statement a service's requests issue no more often than wrong
        // trace matches explain is not one of its queries: a request
        // attributed to another request's trace (under load many take the
        // best fit among several) brings that service's statement along.
        const ServiceRequests own =
            requests_l.count(service) ? requests_l.at(service) : ServiceRequests{};
        const size_t others = matched_all - own.matched;
        const double p_elsewhere =
            others == 0 ? 0
                        : static_cast<double>(issuing_all[shape] - h.requests.size()) /
                              static_cast<double>(others);
        // A request matched with no choice is direct evidence; only the
        // ambiguous issuers are tested against wrong matches.
        const double p_wrong =
            !h.unambiguous.empty()
                ? 0
                : misattribution_p(h.requests.size(), own.ambiguous, p_elsewhere);
        if (p_wrong >= ctx.settings.alpha) {
          ++misattributed;
          continue;
        }
        const double query_single_ms = s == nullptr ? 0 : s->mean_ms();
        const double share_h = h.mean_ms() / phi;
        const double share_s = rho <= 0 ? 0 : query_single_ms / rho;
        // Large under load is a test, not a comparison of one mean: the
        // lower 1 - alpha bound of the call's mean must clear the share
        // (a statement with one call under load cannot be judged).
        const std::optional<double> low = h.mean_low_ms(ctx.settings.alpha);
        const double share_h_low = low ? *low / phi : 0;
        // Eq. 6.26: large under load and grown from the single-user test.
        const bool grows = low && share_h_low > tau && share_h > share_s;
        // Dominant at every load: alone and under load.
        const bool dominates = low && share_h_low >= dominant && share_s >= dominant;
        // growth_rule: most of the service's slowdown is this call's.
        const double slowdown = phi - rho;
        const double growth_share_low =
            low && slowdown > 0 ? (*low - query_single_ms) / slowdown : 0;
        const bool carries_growth = growth_rule && low && slowdown > 0 && growth_share_low > tau;
        const bool found = grows || dominates || carries_growth;
        Evidence ev;
        ev.location = shape;
        ev.test =
            "one call's share of the service's mean response time > " + fmt(tau) +
            " and growing with load (Eq. 6.26), or >= " + fmt(dominant) + " at every load" +
            (growth_rule ? ", or its growth > " + fmt(tau) + " of the service's growth" : "") +
            "; under load the lower " + fmt((1 - ctx.settings.alpha) * 100) +
            "% bound of the call's mean";
        ev.effect_size = share_h;
        ev.effect = "share of the service's response time one call takes under load";
        ev.data = service + ": '" + single->id + "' (" +
                  std::to_string(s == nullptr ? 0 : s->calls) + " calls) vs '" + load->id + "' (" +
                  std::to_string(h.calls) + " calls)";
        ev.detail =
            "In " + service + ", one call of this query takes " + fmt(query_single_ms) + " ms of " +
            fmt(rho) + " ms with one user (" + fmt(share_s * 100) + "%) and " + fmt(h.mean_ms()) +
            " ms of " + fmt(phi) + " ms with " + std::to_string(load->users) + " users (" +
            fmt(share_h * 100) + "%)" +
            (grows            ? ": a large share that grew with load"
             : dominates      ? ": most of the service's time at every load"
             : carries_growth ? ": most of the service's slowdown under load (" +
                                    fmt(growth_share_low * 100) + "% at the lower bound)"
             : !low        ? ": not judged (one call under load has no error to test)"
             : growth_rule ? ": not expensive (neither large and growing, dominant nor most of the "
                             "slowdown)"
                           : ": not expensive (neither large and growing nor dominant)");
        ev.values = {{"service", service},
                     {"query_ms_single_user", query_single_ms},
                     {"query_ms_load", h.mean_ms()},
                     {"service_ms_single_user", rho},
                     {"service_ms_load", phi},
                     {"share_single_user", share_s},
                     {"share_load", share_h},
                     {"share_load_low", share_h_low},
                     {"grows", grows},
                     {"dominates", dominates},
                     {"growth_share_low", growth_share_low},
                     {"carries_growth", carries_growth},
                     {"requests_with_query", h.requests.size()},
                     {"unambiguous_with_query", h.unambiguous.size()},
                     {"service_requests", own.matched},
                     {"ambiguous_requests", own.ambiguous},
                     {"p_misattributed", p_wrong},
                     {"found", found}};
        (found ? r.evidence : checked).push_back(std::move(ev));
      }
    }
    const size_t found = findings_then_checked(r.evidence, std::move(checked));
    r.status = found == 0 ? Status::kNotDetected : Status::kDetected;
    const std::string rules = std::string("a large and growing share of a violating service, ") +
                              (growth_rule ? "most of its time at every load, or most of its "
                                             "slowdown under load"
                                           : "or most of its time at every load");
    r.reason = (found == 0 ? "no single query takes " + rules
                           : std::to_string(found) + " query(ies) take " + rules) +
               "; " + attribution_text(*single, ss) + ", " + attribution_text(*load, sl) +
               (misattributed == 0
                    ? ""
                    : "; " + std::to_string(misattributed) +
                          " statement(s) left out: no more of a service's requests issue them "
                          "than wrong trace matches explain");
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_expensive_database_call() {
  return std::make_unique<ExpensiveDatabaseCall>();
}

}  // namespace sonde::diagnose::heuristics
