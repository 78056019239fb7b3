#include "diagnose/heuristics/request_services.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <vector>

#include "diagnose/heuristics/experiment_traces.hpp"

namespace sonde::diagnose::heuristics {
namespace {

struct RootSpan {
  int64_t start = 0;
  int64_t end = 0;
  int64_t trace_id = 0;
};

// A trace inside a request's interval, with the time neither covers.
struct TraceFit {
  int64_t gap = 0;
  size_t request = 0;
  size_t span = 0;
};

// Requests run for a while; more than this many traces starting inside one
// request are background work, and only the closest candidates matter.
constexpr size_t kCandidatesPerRequest = 16;

void attribute(const Experiment& e, const ExperimentTraces& traces, RequestServices& out) {
  std::vector<RootSpan> spans;
  spans.reserve(traces.traces.size());
  for (const auto& [id, t] : traces.traces) {
    if (!t.root()) continue;  // a child trace
    spans.push_back({t.start, t.end, id});
  }
  std::sort(spans.begin(), spans.end(),
            [](const RootSpan& a, const RootSpan& b) { return a.start < b.start; });
  std::vector<const Request*> requests;
  for (const Request& r : e.requests) {
    if (r.ok()) requests.push_back(&r);
  }
  out.requests = requests.size();
  std::vector<TraceFit> candidates;
  std::vector<TraceFit> mine;
  std::vector<bool> single_candidate(requests.size(), false);
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = *requests[i];
    mine.clear();
    // From the send: an open workload's arrival may wait in the driver first.
    auto it = std::lower_bound(spans.begin(), spans.end(), r.sent(),
                               [](const RootSpan& s, int64_t t) { return s.start < t; });
    for (; it != spans.end() && it->start <= r.end_ns; ++it) {
      if (it->end > r.end_ns) continue;
      const int64_t gap = (it->start - r.sent()) + (r.end_ns - it->end);
      mine.push_back({gap, i, static_cast<size_t>(it - spans.begin())});
    }
    single_candidate[i] = mine.size() == 1;
    if (mine.size() > kCandidatesPerRequest) {
      std::nth_element(mine.begin(), mine.begin() + kCandidatesPerRequest, mine.end(),
                       [](const TraceFit& a, const TraceFit& b) { return a.gap < b.gap; });
      mine.resize(kCandidatesPerRequest);
    }
    candidates.insert(candidates.end(), mine.begin(), mine.end());
  }
  // Best fits first; each request and each trace is used once.
  std::sort(candidates.begin(), candidates.end(), [](const TraceFit& a, const TraceFit& b) {
    return std::tie(a.gap, a.request, a.span) < std::tie(b.gap, b.request, b.span);
  });
  std::vector<bool> request_used(requests.size(), false);
  std::vector<bool> span_used(spans.size(), false);
  for (const TraceFit& c : candidates) {
    if (request_used[c.request] || span_used[c.span]) continue;
    request_used[c.request] = true;
    span_used[c.span] = true;
    out.service_of_trace[spans[c.span].trace_id] = requests[c.request]->service;
    out.request_of_trace[spans[c.span].trace_id] =
        static_cast<size_t>(requests[c.request] - e.requests.data());
    ++out.matched;
    out.unambiguous += single_candidate[c.request];
    if (!single_candidate[c.request])
      out.ambiguous_requests.insert(static_cast<size_t>(requests[c.request] - e.requests.data()));
  }
  // Work a request hands to another thread runs in child traces: they
  // belong to the service of their root.
  for (const auto& [id, t] : traces.traces) {
    if (t.root()) continue;
    int64_t root = t.parent_trace_id;
    for (int depth = 0; depth < 64; ++depth) {  // a parent cycle in bad data ends here
      auto parent = traces.traces.find(root);
      if (parent == traces.traces.end() || parent->second.parent_trace_id == -1 ||
          parent->second.parent_trace_id == root)
        break;
      root = parent->second.parent_trace_id;
    }
    if (auto service = out.service_of_trace.find(root); service != out.service_of_trace.end())
      out.service_of_trace[id] = service->second;
    if (auto request = out.request_of_trace.find(root); request != out.request_of_trace.end())
      out.request_of_trace[id] = request->second;
  }
}

}  // namespace

const RequestServices& request_services(const Experiment& e) {
  static std::mutex mutex;
  static std::map<std::string, RequestServices> cache;
  static const bool registered = register_dir_cache(mutex, cache);
  (void)registered;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(e.dir);
    if (it != cache.end()) return it->second;
  }
  const ExperimentTraces& traces = experiment_traces(e);
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace(e.dir);
  if (!inserted) return it->second;
  RequestServices& out = it->second;
  if (!traces.error.empty()) {
    out.error = traces.error;
    return out;
  }
  attribute(e, traces, out);
  return out;
}

}  // namespace sonde::diagnose::heuristics
