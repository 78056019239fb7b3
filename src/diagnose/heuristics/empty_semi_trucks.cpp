// Empty Semi Trucks (thesis H12, Alg. 26): in a single-user test, a
// request sends many small messages in a loop where one message carrying
// all of it would do. Structural analysis, so heavy instrumentation is fine
// here (SSE: no performance metric is read from this experiment).
//
// 1. Reconstruct each request's trace (flow events of the response_time
//    probe) and place every MessageSend of the messaging probe into it: a
//    send belongs to the innermost execution open at its trace position
//    (the record's orderIndex is the last event before the send).
// 2. Find loops: in an execution's sequence of calls and sends, a body of
//    1..max_loop_body consecutive items repeated >= 2 times with equal
//    structure (operation names and send destinations, recursively; the
//    thesis' repeated sub-trees). A loop whose body sends is a candidate.
// 3. Aggregate candidates over requests by (location, body); detected when
//    the loop's iteration count differs between requests (`varying_count`
//    1). A loop over data iterates once per item, so its count follows the
//    data (the thesis' TPC-W EST loop: one message per order line); a
//    sequence written out in the code (an order's stock batch and its
//    notification, both through one hub: scenario tc17) repeats the same
//    number of times in every request, and equal sends in a row are then
//    different messages, not a loop to batch. Counts are exact, so no test
//    is needed. The price: a loop over a collection of fixed size is not
//    reported. `varying_count` 0 is the thesis' rule (Alg. 26: every send
//    in a loop, i.e. from 2 iterations). Until 2026-12-02 the rule was a
//    mean of >= 3 iterations (min_iterations, set for tc17).
// 4. Rank by the saving potential pi = (nu - 1) * overhead: sending one
//    message instead of nu saves nu - 1 messages' overhead (thesis:
//    (nu - 1)(sigma - beta), total size minus payload). The probe records
//    the payload only, so the per-message overhead is the parameter
//    message_overhead_bytes (default 160 B: the overhead per JMS message
//    the thesis measured in its TPC-W case study, Sec. 7.2.3; a property
//    of that system, not a parameter of the thesis).
#include <algorithm>
#include <functional>
#include <mutex>
#include <set>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/heuristics/experiment_traces.hpp"

namespace sonde::diagnose::heuristics {
namespace {

struct Send {
  int64_t position = 0;  // orderIndex (or timestamp when the trace has no order indexes)
  int64_t timestamp = 0;
  std::string receiver;
  double bytes = 0;
};

struct Item {
  int64_t key = 0;  // sort key within the parent
  bool is_send = false;
  size_t index = 0;  // execution or send index
};

struct LoopStats {
  std::string location;
  std::string body;
  std::set<std::string> receivers;
  size_t requests = 0;
  double iterations = 0;  // summed over requests
  size_t fewest = 0;      // iterations in the request with the fewest
  size_t most = 0;        // ... and with the most (merged per request)
  double messages = 0;
  double bytes = 0;
};

std::string receiver_of(const std::string& destination) {
  const auto arrow = destination.find('>');
  return arrow == std::string::npos ? destination : destination.substr(arrow + 1);
}

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL + (h << 6) + (h >> 2); }

// Loops of one trace, added to `loops`.
void find_loops(const analysis::Trace& t, const std::vector<Send>& sends, size_t max_body,
                std::map<std::string, LoopStats>& loops) {
  const auto& ex = t.executions;
  const size_t n = ex.size();
  if (n == 0) return;
  const bool ordered = std::all_of(ex.begin(), ex.end(),
                                   [](const analysis::Execution& x) { return x.order_index >= 0; });
  std::vector<std::vector<Item>> items(n);
  std::vector<size_t> stack;
  for (size_t i = 0; i < n; ++i) {
    while (stack.size() > static_cast<size_t>(std::max(0, ex[i].ess))) stack.pop_back();
    if (!stack.empty())
      items[stack.back()].push_back({ordered ? ex[i].order_index * 2LL : ex[i].tin * 2, false, i});
    stack.push_back(i);
  }
  for (size_t k = 0; k < sends.size(); ++k) {
    const Send& s = sends[k];
    size_t owner = 0;
    int best = -1;
    for (size_t i = 0; i < n; ++i) {
      const bool open =
          ordered ? ex[i].order_index <= s.position &&
                        (ex[i].exit_order_index < 0 || ex[i].exit_order_index > s.position)
                  : ex[i].tin <= s.timestamp && (ex[i].tout < 0 || ex[i].tout >= s.timestamp);
      if (open && ex[i].ess > best) best = ex[i].ess, owner = i;
    }
    items[owner].push_back({ordered ? s.position * 2 + 1 : s.timestamp * 2 + 1, true, k});
  }
  for (auto& list : items)
    std::stable_sort(list.begin(), list.end(),
                     [](const Item& a, const Item& b) { return a.key < b.key; });
  // Structure hash, sends below and a label per execution, bottom-up
  // (children have larger indexes than their parent).
  std::vector<uint64_t> hash(n);
  std::vector<std::vector<size_t>> below(n);
  auto item_hash = [&](const Item& it) {
    return it.is_send ? mix(0x5e4d, std::hash<std::string>()(sends[it.index].receiver))
                      : hash[it.index];
  };
  for (size_t i = n; i-- > 0;) {
    uint64_t h = std::hash<std::string_view>()(ex[i].operation);
    for (const Item& it : items[i]) {
      h = mix(h, item_hash(it));
      if (it.is_send) {
        below[i].push_back(it.index);
      } else {
        below[i].insert(below[i].end(), below[it.index].begin(), below[it.index].end());
      }
    }
    hash[i] = mix(h, 0x29);
  }
  auto label = [&](const Item& it) {
    return it.is_send ? "send to " + sends[it.index].receiver : std::string(ex[it.index].operation);
  };
  for (size_t i = 0; i < n; ++i) {
    const std::vector<Item>& list = items[i];
    for (size_t at = 0; at < list.size();) {
      size_t best_len = 0, best_reps = 1;
      for (size_t len = 1; len <= max_body && at + 2 * len <= list.size(); ++len) {
        size_t reps = 1;
        while (at + (reps + 1) * len <= list.size()) {
          bool same = true;
          for (size_t j = 0; j < len && same; ++j)
            same = item_hash(list[at + j]) == item_hash(list[at + reps * len + j]);
          if (!same) break;
          ++reps;
        }
        if (reps >= 2 && reps * len > best_reps * best_len) best_len = len, best_reps = reps;
      }
      if (best_len == 0) {
        ++at;
        continue;
      }
      std::vector<size_t> loop_sends;
      for (size_t j = at; j < at + best_reps * best_len; ++j) {
        if (list[j].is_send) {
          loop_sends.push_back(list[j].index);
        } else {
          const auto& b = below[list[j].index];
          loop_sends.insert(loop_sends.end(), b.begin(), b.end());
        }
      }
      if (!loop_sends.empty()) {
        std::string body;
        for (size_t j = at; j < at + best_len; ++j)
          body += (body.empty() ? "" : "; ") + label(list[j]);
        const std::string location(ex[i].operation);
        LoopStats& l = loops[location + "\n" + body];
        l.location = location;
        l.body = body;
        ++l.requests;  // per occurrence here; per request once merged
        l.iterations += static_cast<double>(best_reps);
        l.messages += static_cast<double>(loop_sends.size());
        for (size_t k : loop_sends) {
          l.bytes += sends[k].bytes;
          l.receivers.insert(sends[k].receiver);
        }
      }
      at += best_reps * best_len;
    }
  }
}

// The loops of every request trace that sends, merged by (location, body).
struct SendLoops {
  std::map<std::string, LoopStats> loops;
  size_t placed = 0;   // sends inside a reconstructed trace
  size_t outside = 0;  // sends of no reconstructed trace
  size_t traces = 0;   // traces read
  std::string error;
};

// Streams the experiment's traces (a real program's log may hold 10^8
// executions; only the traces still open are held) and keeps only the
// loops. Cached per experiment and body length: a sensitivity run that
// varies max_loop_body reads the single-user test's log once per value,
// the price of not holding its traces.
const SendLoops& send_loops(const Experiment& e, const LogRecords& recs, size_t max_body) {
  static std::mutex mutex;
  static std::map<std::string, std::map<size_t, SendLoops>> cache;
  static const bool registered = register_dir_cache(mutex, cache);
  (void)registered;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto dir = cache.find(e.dir); dir != cache.end()) {
    if (auto it = dir->second.find(max_body); it != dir->second.end()) return it->second;
  }
  SendLoops out;  // built aside: an exception (bad_alloc) leaves no half-built entry
  std::map<int64_t, std::vector<Send>> by_trace;
  for (const LogRecord& rec : recs.records) {
    by_trace[rec.trace_id].push_back({rec.integer("orderIndex", -1), rec.timestamp,
                                      receiver_of(rec.text("destination")),
                                      std::max(0.0, rec.number("bytes"))});
  }
  // One request's loops, merged per request: a body that repeats in two
  // places of one trace counts its iterations together, so the count
  // compared across requests is the request's. An id read twice (a trace
  // id reused) means its last trace, as in experiment_traces().
  std::map<int64_t, std::map<std::string, LoopStats>> per_trace;
  std::set<int64_t> ids;
  out.error = for_each_trace(e, [&](const analysis::Trace& t) {
    ids.insert(t.trace_id);
    auto sends = by_trace.find(t.trace_id);
    if (t.trace_id < 0 || sends == by_trace.end()) return;
    std::map<std::string, LoopStats>& mine = per_trace[t.trace_id];
    mine.clear();
    find_loops(t, sends->second, max_body, mine);
  });
  out.traces = ids.size();
  for (const auto& [id, mine] : per_trace) {  // by trace id: a deterministic order of sums
    out.placed += by_trace[id].size();
    for (const auto& [key, m] : mine) {
      const auto its = static_cast<size_t>(m.iterations);
      LoopStats& l = out.loops[key];
      l.location = m.location;
      l.body = m.body;
      l.fewest = l.requests == 0 ? its : std::min(l.fewest, its);
      l.most = std::max(l.most, its);
      ++l.requests;
      l.iterations += m.iterations;
      l.messages += m.messages;
      l.bytes += m.bytes;
      l.receivers.insert(m.receivers.begin(), m.receivers.end());
    }
  }
  out.outside = recs.records.size() - out.placed;
  return cache[e.dir].emplace(max_body, std::move(out)).first->second;
}

class EmptySemiTrucks : public Heuristic {
 public:
  std::string name() const override { return "empty_semi_trucks"; }
  std::string title() const override { return "Empty Semi Trucks"; }
  std::string description() const override {
    return "A request sends many small messages in a loop where one message with all the "
           "data would do; each message pays the full overhead. Batch them.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"single_user", "", 1, {"response_time", "messaging"}}};
  }
  std::map<std::string, double> defaults() const override {
    return {{"varying_count", 1}, {"max_loop_body", 4}, {"message_overhead_bytes", 160}};
  }
  std::map<std::string, ParameterKind> parameter_kinds() const override {
    return {{"varying_count", {ParameterKind::kSwitch}}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const Experiment* e = ctx.data.single_user_test();
    if (e == nullptr) return not_evaluated("no complete single-user test in the data");
    for (const char* probe : {"response_time", "messaging"}) {
      if (!e->has_probe(probe))
        return not_evaluated("single-user test '" + e->id + "' ran without the " + probe +
                             " probe (traces and message sends are both needed)");
    }
    const LogRecords& recs = log_records(*e, "sonde.record.MessageSend");
    if (!recs.error.empty()) return not_evaluated(recs.error);
    NodeResult r;
    if (recs.records.empty()) {
      r.status = Status::kNotDetected;
      r.reason = "no messages sent in single-user test '" + e->id + "'";
      return r;
    }
    const auto max_body = static_cast<size_t>(std::max(1.0, ctx.params.at("max_loop_body")));
    const SendLoops& found_loops = send_loops(*e, recs, max_body);
    if (!found_loops.error.empty()) return not_evaluated(found_loops.error);
    const std::map<std::string, LoopStats>& loops = found_loops.loops;
    const size_t placed = found_loops.placed, outside = found_loops.outside;
    const std::string traces_read = std::to_string(found_loops.traces) + " reconstructed traces";
    if (placed == 0) {
      return not_evaluated("none of the " + std::to_string(recs.records.size()) +
                           " message sends lies in a reconstructed request trace (" + traces_read +
                           "; is the response_time probe monitoring the sending code?)");
    }
    const double overhead = ctx.params.at("message_overhead_bytes");
    const std::string data = describe_sample(*e, recs.records.size()) + " message sends, " +
                             std::to_string(placed) + " in " + traces_read +
                             (outside > 0 ? ", " + std::to_string(outside) + " outside" : "");
    nlohmann::json chart = nlohmann::json::array();
    const bool varying_count = ctx.params.at("varying_count") != 0;
    std::vector<Evidence> fixed;  // loops not reported, shown after the findings
    for (const auto& [key, l] : loops) {
      const double nu = l.iterations / static_cast<double>(l.requests);
      const double per_request = l.messages / static_cast<double>(l.requests);
      const double payload = l.messages > 0 ? l.bytes / l.messages : 0;
      const double saving = std::max(0.0, per_request - 1) * overhead;
      const double traffic = per_request * (payload + overhead);
      std::string receivers;
      for (const std::string& d : l.receivers) receivers += (receivers.empty() ? "" : ", ") + d;
      chart.push_back({{"location", l.location}, {"iterations", nu}, {"saving_bytes", saving}});
      const bool varies = l.most > l.fewest;
      const bool found = !varying_count || varies;
      Evidence ev;
      ev.location = l.location + " (loop: " + l.body + ")";
      ev.test = varying_count ? "message send inside a loop of the reconstructed trace whose "
                                "iteration count differs between requests"
                              : "message send inside a loop of the reconstructed trace";
      ev.effect_size = saving;
      ev.effect = "saving potential: bytes per request saved by one message instead of the loop's";
      ev.data = data;
      ev.detail = "Each request sends " + fmt(per_request) + " messages of " + fmt(payload) +
                  " bytes to " + receivers + " in a loop of " + fmt(nu) + " iterations in " +
                  l.location + "; one message instead would save about " + fmt(saving) +
                  " bytes (" + fmt(traffic > 0 ? 100 * saving / traffic : 0) +
                  "% of this traffic) and " + fmt(per_request - 1) + " sends per request" +
                  (found ? ""
                         : "; not reported: it iterates " + std::to_string(l.most) +
                               " times in each of its " + std::to_string(l.requests) +
                               " requests, a sequence written out in the code rather than a "
                               "loop over data");
      ev.values = {{"requests", l.requests},
                   {"iterations", nu},
                   {"messages_per_request", per_request},
                   {"payload_bytes", payload},
                   {"overhead_bytes", overhead},
                   {"saving_bytes", saving},
                   {"saving_share", traffic > 0 ? saving / traffic : 0},
                   {"fewest_iterations", l.fewest},
                   {"most_iterations", l.most},
                   {"found", found},
                   {"receivers", receivers}};
      (found ? r.evidence : fixed).push_back(std::move(ev));
    }
    const size_t fixed_count = fixed.size();
    const size_t reported = findings_then_checked(r.evidence, std::move(fixed));
    r.charts["loops"] = chart;
    r.status = reported == 0 ? Status::kNotDetected : Status::kDetected;
    r.reason = reported > 0 ? std::to_string(reported) + " loop(s) send messages one by one"
               : fixed_count == 0
                   ? "no message is sent inside a loop (" + std::to_string(placed) +
                         " sends in request traces)"
                   : "no loop over data sends messages: " + std::to_string(fixed_count) +
                         " repeated send(s) repeat the same number of times in every request";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_empty_semi_trucks() { return std::make_unique<EmptySemiTrucks>(); }

}  // namespace sonde::diagnose::heuristics
