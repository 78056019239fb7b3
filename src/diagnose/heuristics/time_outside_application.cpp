// Time Outside the Application (sonde's node, not the thesis'): where a
// request's response time goes, inside the application's traces or outside
// them. The load driver measures a request from sending it to the last byte
// of the answer; the trace that served it (request_services.hpp: the trace
// that fills the request's interval best) measures the application's own
// part. The rest passed outside the application: in the network stack
// (Nagle's algorithm waiting for the client's delayed ACK), in a queue
// before the request reached a handler (the listen backlog, a pool of
// workers too small for the connections), or in the client.
//
// Per service that violates its requirement (Performance Problem's
// violating services when it is an ancestor, else every service), at each
// examined experiment (the single-user test, load tests, scaling steps)
// where it violates: found when the outside time is at least
// `min_outside_share` of its response time (the mean of the per-request
// shares significantly above it, one-sample t-test, alpha), unless the
// system under test and the load driver saturated the CPU there (the
// machine's busy share less other processes' >= `max_cpu_utilization`:
// then the server's I/O threads and the load driver wait for a core, and
// that is outside the traces too). Likely causes, in the evidence:
//  - Nagle + delayed ACK: at least `min_cluster_share` of the requests spent
//    `delayed_ack_ms` (1 +- `delayed_ack_tolerance`) outside: a response
//    written in two pieces without TCP_NODELAY waits for the client's
//    delayed ACK;
//  - queueing before the application: the outside time per request rose
//    significantly from the lowest load (Welch, one-sided, alpha) and that
//    rise is itself at least `min_outside_share` of the response time.
//
// Over 500 lines: the request/trace split (which trace served which
// request, and what of its time was outside) exists only for this node,
// and the node's evidence rows read its intermediate figures.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/heuristics/experiment_cache.hpp"
#include "diagnose/heuristics/experiment_traces.hpp"
#include "diagnose/heuristics/request_services.hpp"
#include "stats/binomial.hpp"
#include "stats/descriptive.hpp"
#include "stats/t_test.hpp"

namespace sonde::diagnose::heuristics {
namespace {

// One service's attributed requests in one experiment.
struct ServiceSplit {
  std::vector<double> response_ms;
  std::vector<double> inside_ms;
  std::vector<double> outside_ms;
  std::vector<double> outside_share;  // per request
  // Time the request waited in the load driver for a free connection (the
  // open workload's queue, behind slow answers): neither inside nor
  // outside the application, and not counted as outside.
  std::vector<double> driver_wait_ms;
};

struct ExperimentSplit {
  std::map<std::string, ServiceSplit> services;
  size_t requests = 0;     // successful requests
  size_t matched = 0;      // attributed to their trace
  size_t unambiguous = 0;  // of them, with one trace inside (request_services)
  // Of the matched, those whose trace is the only one inside the request on
  // the thread that serves the user's connection (below).
  size_t by_connection = 0;
  std::string error;
};

// The share of a thread's traces that must run inside one user's requests
// for it to be that user's connection's thread: a worker that reads one
// keep-alive connection runs nothing else (the odd trace at the stable
// phase's borders aside), while a thread shared by n users' work has about
// 1/n of its traces in each user's requests.
constexpr double kConnectionThreadShare = 0.9;

// request index -> its root trace: request_services' best fit, refined by
// connection. When the outside time is long, many traces fit a request
// about equally (the gap is the request's length minus the trace's
// wherever the trace lies), so the best fit alone can take another user's
// trace. A thread-per-connection server reads a keep-alive connection on
// one worker, one request after another, and that worker wakes as a
// request arrives: a user whose requests were, for most of them, first
// answered by one thread (its next trace starts before any other thread's)
// is served by that thread, and the one trace of that thread inside a
// request is the request's. Other servers (event loops, a request handed
// between threads) find no such thread and keep the best fit.
std::map<size_t, const TraceSpan*> request_traces(const Experiment& e, const RequestServices& rs,
                                                  const ExperimentTraces& traces,
                                                  size_t* by_connection) {
  std::map<size_t, const TraceSpan*> best;
  for (const auto& [id, request] : rs.request_of_trace) {
    auto t = traces.traces.find(id);
    if (t == traces.traces.end()) continue;
    const TraceSpan& trace = t->second;
    if (!trace.root()) continue;
    best[request] = &trace;
  }
  // Root traces per thread, by start.
  std::map<int64_t, std::vector<const TraceSpan*>> on_thread;
  for (const auto& [id, t] : traces.traces) {
    if (!t.root()) continue;
    if (t.thread_id >= 0 && t.executions > 0) on_thread[t.thread_id].push_back(&t);
  }
  for (auto& [thread, list] : on_thread)
    std::sort(list.begin(), list.end(),
              [](const TraceSpan* a, const TraceSpan* b) { return a->start < b->start; });
  auto first_after = [](const std::vector<const TraceSpan*>& list, int64_t at) {
    return std::lower_bound(list.begin(), list.end(), at,
                            [](const TraceSpan* t, int64_t v) { return t->start < v; });
  };
  // user -> thread -> requests it answered first; user -> requests
  std::map<int, std::map<int64_t, size_t>> first_of_user;
  std::map<int, size_t> requests_of_user;
  for (const Request& r : e.requests) {
    if (!r.ok()) continue;
    ++requests_of_user[r.user];
    int64_t thread = -1;
    int64_t earliest = r.end_ns + 1;
    for (const auto& [h, list] : on_thread) {
      auto it = first_after(list, r.sent());
      if (it != list.end() && (*it)->start < earliest) {
        earliest = (*it)->start;
        thread = h;
      }
    }
    if (thread >= 0) ++first_of_user[r.user][thread];
  }
  // A thread that serves one connection answers that user first far more
  // often than its share of all first responses predicts: were users
  // served by whichever thread comes (a pool, an event loop), thread h
  // would answer user u's n requests first Binomial(n, share_h) times,
  // share_h = h's first responses over all users'. A candidate needs
  // P(X >= count) < alpha / (users x first responders) (Bonferroni over
  // every pair tested). Of a user's candidates the one that answered it
  // most; a single first responder (an event loop) has none. Claimed by
  // several users, a thread serves them all: no connection matching there.
  // The default alpha: the split is cached per experiment and shared by
  // every evaluation, so a config's alpha cannot reach it.
  const double alpha = Settings{}.alpha;
  std::map<int64_t, size_t> firsts_of_thread;
  size_t firsts = 0;
  for (const auto& [user, answered] : first_of_user) {
    for (const auto& [thread, count] : answered) {
      firsts_of_thread[thread] += count;
      firsts += count;
    }
  }
  const double responders = static_cast<double>(firsts_of_thread.size());
  const double level =
      alpha / std::max(1.0, static_cast<double>(first_of_user.size()) * responders);
  std::map<int64_t, std::vector<int>> users_of_thread;
  for (const auto& [user, answered] : first_of_user) {
    size_t n = 0;  // the user's requests with a first responder
    for (const auto& [thread, count] : answered) n += count;
    int64_t best_thread = -1;
    size_t best_count = 0;
    for (const auto& [thread, count] : answered) {
      const double share =
          static_cast<double>(firsts_of_thread[thread]) / static_cast<double>(firsts);
      const double p =
          responders <= 1 || share >= 1 ? 1 : stats::binomial_upper_tail(count, n, share);
      if (p < level && count > best_count) best_thread = thread, best_count = count;
    }
    if (best_thread >= 0) users_of_thread[best_thread].push_back(user);
  }
  // And its traces run inside that user's requests (all but the odd one at
  // the stable phase's borders): a shared thread (a message consumer, a
  // timer) runs work inside every user's requests and outside them.
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> intervals_of_user;
  for (const Request& r : e.requests)
    if (r.ok()) intervals_of_user[r.user].emplace_back(r.sent(), r.end_ns);
  for (auto& [user, list] : intervals_of_user) std::sort(list.begin(), list.end());
  auto inside_user = [&](int user, const TraceSpan* t) {
    const auto& list = intervals_of_user[user];
    auto it = std::upper_bound(list.begin(), list.end(),
                               std::pair<int64_t, int64_t>{t->start, INT64_MAX});
    return it != list.begin() && std::prev(it)->second >= t->end;
  };
  std::map<int64_t, int> user_of_thread;
  std::map<int, int64_t> thread_of_user;
  for (const auto& [thread, users] : users_of_thread) {
    if (users.size() != 1) continue;
    const std::vector<const TraceSpan*>& list = on_thread[thread];
    const int only_user = users.front();  // clang 14 cannot capture a structured binding
    const auto in = std::count_if(list.begin(), list.end(),
                                  [&](const TraceSpan* t) { return inside_user(only_user, t); });
    if (static_cast<double>(in) < kConnectionThreadShare * static_cast<double>(list.size()))
      continue;
    user_of_thread[thread] = users.front();
    thread_of_user[users.front()] = thread;
  }
  if (thread_of_user.empty()) return best;
  std::map<size_t, const TraceSpan*> refined;
  std::set<const TraceSpan*> claimed;
  for (size_t i = 0; i < e.requests.size(); ++i) {
    const Request& r = e.requests[i];
    if (!r.ok()) continue;
    auto user = thread_of_user.find(r.user);
    if (user == thread_of_user.end()) continue;
    const std::vector<const TraceSpan*>& list = on_thread[user->second];
    auto it = first_after(list, r.start_ns);
    const TraceSpan* only = nullptr;
    int inside = 0;
    for (; it != list.end() && (*it)->start <= r.end_ns; ++it) {
      if ((*it)->end > r.end_ns) continue;
      only = *it;
      ++inside;
    }
    if (inside != 1 || claimed.count(only)) continue;
    refined[i] = only;
    claimed.insert(only);
  }
  *by_connection = refined.size();
  // The best fit for the rest, unless a refined request took its trace or
  // it ran on the thread of another user's connection. A user's thread
  // found above shows a thread-per-connection server (where threads serve
  // whoever comes, the test finds none with probability 1 - alpha, and a
  // thread must also run 90% of its traces inside that one user's
  // requests), so a user without one left no traces of
  // its own (e.g. lost with its worker's records) and its best fits are a
  // neighbour's or background work: a 40-ms call got a 0.5-ms message
  // delivery in a run where one of six workers' traces were absent. Those
  // requests stay unattributed. (Until 2026-12-02 this took half of the
  // users with a thread, a rule made for that run, tc08's quick run.)
  for (const auto& [request, trace] : best) {
    if (refined.count(request) || claimed.count(trace)) continue;
    const int user = e.requests[request].user;
    if (!thread_of_user.count(user)) continue;
    auto owner = user_of_thread.find(trace->thread_id);
    if (owner != user_of_thread.end() && owner->second != user) continue;
    refined[request] = trace;
  }
  return refined;
}

// Per request: inside = the span of the root trace that served it, outside
// = the time from its send to its answer minus that (an open workload's
// arrival that waited in the driver for a free connection waited behind
// the application's own slow answers: that wait is kept apart, scenario
// l03's checkpoint pauses). Cached per experiment.
const ExperimentSplit& experiment_split(const Experiment& e) {
  return per_experiment<ExperimentSplit>(e, [&e] {
    ExperimentSplit out;
    const RequestServices& rs = request_services(e);
    const ExperimentTraces& traces = experiment_traces(e);
    if (!rs.error.empty()) {
      out.error = rs.error;
    } else if (!traces.error.empty()) {
      out.error = traces.error;
    } else {
      out.requests = rs.requests;
      out.unambiguous = rs.unambiguous;
      for (const auto& [request, trace] : request_traces(e, rs, traces, &out.by_connection)) {
        const Request& r = e.requests.at(request);
        const double response = r.response_ms();
        if (response <= 0) continue;
        const double wait = std::clamp(r.driver_wait_ms(), 0.0, response);
        const double served = response - wait;
        const double inside = std::clamp(static_cast<double>(trace->duration()) / 1e6, 0.0, served);
        ServiceSplit& s = out.services[r.service];
        s.response_ms.push_back(response);
        s.inside_ms.push_back(inside);
        s.outside_ms.push_back(served - inside);
        s.outside_share.push_back((served - inside) / response);
        s.driver_wait_ms.push_back(wait);
        ++out.matched;
      }
    }
    return out;
  });
}

double split_mean(const std::vector<double>& v) { return v.empty() ? 0 : stats::mean(v); }

// P(mean > mu) is significant: one-sided one-sample t-test, p-value.
double p_split_above(const std::vector<double>& v, double mu) {
  if (v.size() < 2) return 1;
  const double m = stats::mean(v);
  const double se = stats::stddev(v) / std::sqrt(static_cast<double>(v.size()));
  if (se <= 0) return m > mu ? 0 : 1;
  return 1 - stats::student_t_cdf((m - mu) / se, static_cast<double>(v.size() - 1));
}

// The share of the machine's CPU the experiment itself kept busy (the
// system under test and the load driver): the CPU sampler's records, else
// the engine's accounting of the machine, less what other processes took
// (experiment.json cpu_accounting; a busy machine is the report's warning,
// not the application's CPU queue); -1 unknown.
double split_cpu_utilization(const Experiment& e) {
  double u = 0;
  int cores = 0;
  std::string error;
  if (!cpu_utilization(e, &u, &cores, &error)) u = e.busy_cpu_share;
  if (u < 0) return -1;
  return e.other_cpu_share >= 0 ? std::max(0.0, u - e.other_cpu_share) : u;
}

class TimeOutsideApplication : public Heuristic {
 public:
  std::string name() const override { return "time_outside_application"; }
  std::string title() const override { return "Time Outside the Application"; }
  std::string description() const override {
    return "The application answers quickly, but most of the response time passes outside it: "
           "in the network stack (a response written in pieces waits for the client's delayed "
           "ACK), in a queue before a handler takes the request (listen backlog, too few "
           "workers for the connections), or in the client. Look at how responses are written "
           "and how connections are accepted, not at the application's code.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"single_user", "", 1, {"response_time"}}, {"load", "", 1, {"response_time"}}};
  }
  std::map<std::string, double> defaults() const override {
    // All sonde's own (the thesis has no such node); docs/diagnose/heuristics.md
    // gives the reason for each value.
    return {{"min_outside_share", 0.5},  {"min_attributed", 0.5},
            {"delayed_ack_ms", 40},      {"delayed_ack_tolerance", 0.25},
            {"min_cluster_share", 0.5},  {"max_cpu_utilization", 0.8},
            {"min_relative_increase", 0}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"max_cpu_utilization", {ParameterKind::kShare}},
            {"min_attributed", {ParameterKind::kShare}},
            {"min_cluster_share", {ParameterKind::kShare}},
            {"min_outside_share", {ParameterKind::kShare}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const override {
    const double min_share = ctx.params.at("min_outside_share");
    const double min_attributed = ctx.params.at("min_attributed");
    const double ack_ms = ctx.params.at("delayed_ack_ms");
    const double ack_tol = ctx.params.at("delayed_ack_tolerance");
    const double min_cluster = ctx.params.at("min_cluster_share");
    const double max_cpu = ctx.params.at("max_cpu_utilization");

    // The experiments: single-user, load and scaling, by users ascending.
    std::vector<const Experiment*> experiments;
    for (const char* kind : {"single_user", "load", "scaling"}) {
      for (const Experiment* e : ctx.data.of_kind(kind))
        if (e->has_probe("response_time")) experiments.push_back(e);
    }
    std::stable_sort(experiments.begin(), experiments.end(),
                     [](const Experiment* a, const Experiment* b) { return a->users < b->users; });
    if (experiments.empty())
      return not_evaluated(
          "needs a single-user test or a load test with the response_time probe (traces)");
    // Experiments whose requests found their traces; the others are named.
    std::vector<const Experiment*> usable;
    std::string unusable;
    std::string attribution;
    for (const Experiment* e : experiments) {
      const ExperimentSplit& split = experiment_split(*e);
      if (!split.error.empty()) return not_evaluated(split.error);
      const bool ok =
          split.requests > 0 && static_cast<double>(split.matched) >=
                                    min_attributed * static_cast<double>(split.requests);
      attribution += (attribution.empty() ? "" : "; ") + ("'" + e->id + "': ") +
                     std::to_string(split.matched) + " of " + std::to_string(split.requests) +
                     " requests attributed to their trace (" + std::to_string(split.unambiguous) +
                     " with one trace inside, " + std::to_string(split.by_connection) +
                     " by their connection's thread)";
      if (ok)
        usable.push_back(e);
      else
        unusable += (unusable.empty() ? "" : ", ") + e->id;
    }
    if (usable.empty())
      return not_evaluated("too few requests found the trace that served them (" + attribution +
                           "): is the request handler monitored?");

    // The services to examine.
    std::set<std::string> services;
    for (const Experiment* e : usable)
      for (const std::string& s : e->services()) services.insert(s);
    if (auto pp = ctx.ancestors.find("performance_problem");
        pp != ctx.ancestors.end() && pp->second.contains("violating_services")) {
      const auto violating = pp->second["violating_services"].get<std::vector<std::string>>();
      std::erase_if(services, [&](const std::string& s) {
        return std::find(violating.begin(), violating.end(), s) == violating.end();
      });
    }

    NodeResult r;
    nlohmann::json chart = nlohmann::json::array();
    nlohmann::json found_services = nlohmann::json::array();
    std::string found_text;
    std::set<std::string> causes_seen;
    const Experiment* lowest = usable.front();
    for (const std::string& service : services) {
      static const ServiceSplit none;
      auto data = [&](const Experiment* e) -> const ServiceSplit& {
        const ExperimentSplit& split = experiment_split(*e);
        auto it = split.services.find(service);
        return it == split.services.end() ? none : it->second;
      };
      const ServiceSplit& base = data(lowest);
      const double base_outside = split_mean(base.outside_ms);
      const Requirement& req = ctx.settings.for_service(service);
      nlohmann::json points = nlohmann::json::array();
      std::vector<Evidence> rows;
      bool service_found = false;
      std::set<std::string> service_causes;
      double best_share = -1;
      std::string best_split;
      for (const Experiment* e : usable) {
        const ServiceSplit& d = data(e);
        if (d.response_ms.empty()) continue;
        const double rt = split_mean(d.response_ms);
        const double inside = split_mean(d.inside_ms);
        const double outside = split_mean(d.outside_ms);
        const double driver_wait = split_mean(d.driver_wait_ms);
        const double share = rt > 0 ? outside / rt : 0;
        const double median_outside = stats::percentile(d.outside_ms, 0.5);
        points.push_back({{"users", e->users},
                          {"experiment", e->id},
                          {"inside_ms", inside},
                          {"outside_ms", outside},
                          {"share", share}});
        const std::vector<double> all_rt = e->response_times(service);
        const double pct = stats::percentile(all_rt, req.percentile);
        const bool violated = pct > req.threshold_ms;
        if (!violated) continue;
        const double utilization = split_cpu_utilization(*e);
        const bool cpu_saturated = utilization >= max_cpu;
        const double p = p_split_above(d.outside_share, min_share);
        const bool dominant = share >= min_share && p < ctx.settings.alpha;
        const bool found = dominant && !cpu_saturated;
        // Causes: the delayed-ACK stall, and growth with load.
        size_t clustered = 0;
        for (double o : d.outside_ms)
          clustered += o >= ack_ms * (1 - ack_tol) && o <= ack_ms * (1 + ack_tol);
        const double cluster_share =
            static_cast<double>(clustered) / static_cast<double>(d.outside_ms.size());
        const bool nagle = cluster_share >= min_cluster;
        Increase inc;
        double growth_share = 0;
        bool grows = false;
        if (e->users > lowest->users && !base.outside_ms.empty()) {
          inc = test_increase(base.outside_ms, d.outside_ms, ctx.settings.alpha,
                              ctx.params.at("min_relative_increase"));
          // What load added outside is itself most of the response time:
          // a rise of 2 ms on a 44-ms stall is noise around the stall, not a
          // queue (tc24's quick run: GET /shipping 43.6 -> 45.9 ms).
          growth_share = rt > 0 ? (outside - base_outside) / rt : 0;
          grows = inc.significant && growth_share >= min_share;
        }
        std::vector<std::string> causes;
        if (nagle) causes.push_back("nagle_delayed_ack");
        if (grows) causes.push_back("queue_before_application");
        if (causes.empty()) causes.push_back("unclassified");
        if (found) {
          service_found = true;
          for (const std::string& c : causes) service_causes.insert(c);
          if (share > best_share) {
            best_share = share;
            best_split = fmt(inside) + " ms inside, " + fmt(outside) + " ms outside (" +
                         fmt(share * 100) + "%) at " + std::to_string(e->users) + " user(s)";
          }
        }
        Evidence ev;
        ev.location = service;
        ev.test = "outside share of the response time >= " + fmt(min_share) +
                  " (one-sample t-test of the per-request shares, one-sided) where the "
                  "requirement is violated and the experiment's own CPU is below " +
                  fmt(max_cpu * 100) + "%";
        ev.p_value = p;
        ev.effect_size = share;
        ev.effect = "share of the response time outside the application";
        ev.data = describe_sample(*e, d.response_ms.size()) +
                  " requests attributed to their trace, of " +
                  std::to_string(experiment_split(*e).requests);
        std::string why;
        if (nagle)
          why += "; " + fmt(cluster_share * 100) + "% of the requests spent " +
                 fmt(ack_ms * (1 - ack_tol)) + "-" + fmt(ack_ms * (1 + ack_tol)) +
                 " ms outside (median " + fmt(median_outside) +
                 " ms): Nagle's algorithm holding the second part of a response until the "
                 "client's delayed ACK (write the response at once, or set TCP_NODELAY)";
        if (grows)
          why += "; the outside time grew from " + fmt(base_outside) + " ms at " +
                 std::to_string(lowest->users) + " user(s), a rise of " + fmt(growth_share * 100) +
                 "% of the response time: requests wait before a handler takes them "
                 "(accept queue / listen backlog, too few workers for the connections, a "
                 "proxy) or the load driver is saturated";
        if (found && !nagle && !grows)
          why +=
              "; neither a delayed-ACK stall nor growth with load: look at the network "
              "path, a proxy, or the client";
        if (dominant && cpu_saturated)
          why += "; not counted: the system under test and the load driver kept the CPU " +
                 fmt(utilization * 100) +
                 "% busy, so the outside time may be the server's I/O threads and the load "
                 "driver waiting for a core";
        ev.detail = "At " + std::to_string(e->users) + " user(s) ('" + e->id + "') " + service +
                    " took " + fmt(rt) + " ms per request: " + fmt(inside) +
                    " ms inside the application, " + fmt(outside) + " ms (" + fmt(share * 100) +
                    "%) outside it" +
                    (driver_wait > 0 ? ", " + fmt(driver_wait) +
                                           " ms waiting in the load driver for a free connection "
                                           "(behind the application's slower answers; counted in "
                                           "neither)"
                                     : "") +
                    why;
        ev.values = {{"users", e->users},
                     {"experiment", e->id},
                     {"service", service},
                     {"response_ms", rt},
                     {"inside_ms", inside},
                     {"outside_ms", outside},
                     {"driver_wait_ms", driver_wait},
                     {"share", share},
                     {"median_outside_ms", median_outside},
                     {"percentile_ms", pct},
                     {"threshold_ms", req.threshold_ms},
                     {"cluster_share", cluster_share},
                     {"outside_ms_lowest_load", base_outside},
                     {"growth_share", growth_share},
                     {"growth_significant", inc.significant},
                     {"cpu_utilization", utilization},
                     {"cpu_saturated", cpu_saturated},
                     {"causes", causes},
                     {"found", found}};
        rows.push_back(std::move(ev));
      }
      // A service that violates nowhere: its split at the highest load,
      // as checked and fine.
      if (rows.empty() && !points.empty()) {
        const nlohmann::json& last = points.back();
        Evidence ev;
        ev.location = service;
        ev.test = "requirement violated";
        ev.effect_size = last["share"].get<double>();
        ev.effect = "share of the response time outside the application";
        ev.data = "experiment '" + last["experiment"].get<std::string>() + "'";
        ev.detail = "At " + std::to_string(last["users"].get<int>()) + " user(s) " + service +
                    " meets its requirement: " + fmt(last["inside_ms"].get<double>()) +
                    " ms inside the application, " + fmt(last["outside_ms"].get<double>()) +
                    " ms outside it";
        ev.values = {{"users", last["users"]},
                     {"experiment", last["experiment"]},
                     {"service", service},
                     {"inside_ms", last["inside_ms"]},
                     {"outside_ms", last["outside_ms"]},
                     {"share", last["share"]},
                     {"found", false}};
        rows.push_back(std::move(ev));
      }
      // The findings first, the largest share first.
      std::stable_sort(rows.begin(), rows.end(), [](const Evidence& a, const Evidence& b) {
        const bool fa = a.values["found"].get<bool>();
        const bool fb = b.values["found"].get<bool>();
        if (fa != fb) return fa;
        return a.effect_size > b.effect_size;
      });
      for (Evidence& ev : rows) r.evidence.push_back(std::move(ev));
      if (!points.empty())
        chart.push_back({{"service", service}, {"points", points}, {"found", service_found}});
      if (!service_found) continue;
      found_services.push_back(service);
      causes_seen.insert(service_causes.begin(), service_causes.end());
      found_text += (found_text.empty() ? "" : "; ") + service + " " + best_split;
    }
    r.charts["time_split"] = chart;
    shared["services"] = found_services;
    const std::string attributed =
        " (" + attribution + ")" +
        (unusable.empty() ? std::string()
                          : "; not judged, too few requests attributed: " + unusable);
    if (found_services.empty()) {
      r.status = Status::kNotDetected;
      r.reason = "no violating service spends most of its response time outside the application" +
                 attributed;
      return r;
    }
    std::string likely;
    if (causes_seen.count("nagle_delayed_ack"))
      likely += ", Nagle's algorithm waiting for the client's delayed ACK (outside time near " +
                fmt(ack_ms) + " ms)";
    if (causes_seen.count("queue_before_application"))
      likely += ", requests queueing before a handler takes them (outside time grows with load)";
    if (causes_seen.count("unclassified")) likely += ", the network path, a proxy or the client";
    r.status = Status::kDetected;
    r.reason =
        std::to_string(found_services.size()) +
        " service(s) spend most of their response time outside the application: " + found_text +
        "; likely: " + likely.substr(2) + attributed;
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_time_outside_application() {
  return std::make_unique<TimeOutsideApplication>();
}

}  // namespace sonde::diagnose::heuristics
