// Culling (docs/cull.md): the writer observes the monitored calls in
// windows and excludes the functions whose calls are many, short and cost
// more to record than they are worth; their call sites are then patched
// (callsite_patch.cpp). The state: cull_state.hpp; the report and the exit
// summary: cull_report.cpp.
#include "monitor/cull.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/function_name.hpp"
#include "monitor/callsite_patch.hpp"
#include "monitor/channel.hpp"
#include "monitor/clock.hpp"
#include "monitor/controller.hpp"
#include "monitor/cull_rule.hpp"
#include "monitor/cull_state.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/leaf_code.hpp"
#include "monitor/probe_busy.hpp"
#include "monitor/process_info.hpp"
#include "monitor/symbolizer.hpp"

namespace sonde::monitor {

using format::without_return_type;
namespace culling {

namespace {

// Called with c.mu held.
void start_culling(Cull& c) {
  const Config& config = current_config();
  if (!config.cull) {
    c.phase = Phase::kOff;
    return;
  }
  c.thresholds.min_calls = config.cull_min_calls;
  c.thresholds.min_rate = config.cull_min_rate;
  c.thresholds.max_ns = config.cull_max_ns;
  c.thresholds.probe_ns = config.cull_probe_ns;
  c.window_calls = config.cull_phase_calls;
  c.window_ms = config.cull_phase_ms;
  c.max_windows = config.cull_rounds;
  c.leaf_instructions = config.cull_leaf_instructions;
  c.early_share = config.cull_early_percent / 100.0;
  c.start = ClockPair::now();
  c.phase = Phase::kObserving;
  // A forked child counts its own threads. The lock is free at fork():
  // every entry point runs with the controller's core_mu held, which the
  // controller holds across fork().
  pthread_atfork(nullptr, nullptr, [] {
    Cull& child = cull_state();
    child.stacks.clear();
    child.inherited = child.excluded_any;
    child.last_change = ClockPair::now();
    child.calls_since_change = child.culled_since_change = 0;
  });
}

Window::CacheEntry& cache_slot(Window& w, uint64_t address) {
  return w.cache[(address >> 4) & (w.cache.size() - 1)];
}

Stats& stats_of(Window& w, uint64_t address) {
  Window::CacheEntry& slot = cache_slot(w, address);
  if (slot.address != address) slot = {address, &w.stats[address]};
  return *slot.stats;
}

bool is_exit(RawKind k) {
  return k == RawKind::kExitFn || k == RawKind::kFailFn || k == RawKind::kExitOp ||
         k == RawKind::kFailOp;
}

// One thread's events: inclusive durations from its own stack of open
// frames (kept across windows). A frame whose exit never comes (the probe
// closes frames left by longjmp itself) is dropped when an outer exit arrives.
void observe(Cull& c, std::vector<Frame>& stack, const RawEvent* begin, const RawEvent* end,
             bool observing) {
  Window& w = *c.window;
  for (const RawEvent* e = begin; e < end; ++e) {
    const RawKind kind = kind_of(e->b);
    const uint64_t payload = payload_of(e->b);
    // Events the program made before the last decision took effect belong
    // to no window: the writer, behind the program, drains them after the
    // decision, and accounting them (calls of functions culled meanwhile)
    // cost it as much as a window while deciding nothing. (Only calls'
    // events carry a time in `a`; a trace's begin carries its id.)
    const bool stale = e->a < c.observe_from;
    if (kind == RawKind::kEnterFn || kind == RawKind::kEnterOp) {
      // Calls of culled functions after the change are counted per window
      // from its statistics (decide()), not here: a search per event cost
      // the writer more than the rest of the observation.
      if (c.excluded_any && e->a >= c.last_change.raw) ++c.calls_since_change;
      // A full window takes no new frames until it is decided (at the
      // writer's next check); the frames it has still end.
      if (stale || !observing || w.calls >= c.window_calls) continue;
      stack.push_back({kind == RawKind::kEnterFn ? payload : payload | kOpTag, e->a, 0});
      if (w.calls++ == 0) {
        w.start_ms = monotonic_ns_now() / 1000000;
        w.first_tick = e->a;
      }
      w.first_tick = std::min(w.first_tick, e->a);
      w.last_tick = std::max(w.last_tick, e->a);
    } else if (!stale && observing && is_exit(kind)) {
      bool fn = kind == RawKind::kExitFn || kind == RawKind::kFailFn;
      uint64_t key = fn ? payload : payload | kOpTag;
      size_t i = stack.size();
      // In a full window, whose enters are not taken, only the top frame
      // may end: a recursive function's inner exit would otherwise end its
      // outer frame.
      if (w.calls >= c.window_calls && i > 0 && stack[i - 1].key != key) continue;
      while (i > 0 && stack[i - 1].key != key) --i;
      if (i == 0) continue;  // an exit without its enter (entered before culling began)
      Frame f = stack[i - 1];
      stack.resize(i - 1);
      if (w.calls != 0) w.last_tick = std::max(w.last_tick, e->a);
      // Frames entered before this window still count: their calls are
      // its calls too, and long ones would otherwise never be seen whole.
      if (fn && e->a >= f.enter) {
        Stats& s = stats_of(w, key);
        // Ripe at min_calls, and again each time its calls reach a power
        // of two past that: one slow call among the first (a preemption,
        // a page fault) would otherwise keep a short function monitored
        // until its window ends; its weight in the mean halves each time.
        ++s.calls;
        if ((s.calls == c.thresholds.min_calls ||
             (s.calls > c.thresholds.min_calls && (s.calls & (s.calls - 1)) == 0)) &&
            (c.leaf_instructions != 0 || c.early_share > 0)) {
          c.ripe.push_back(key);
        }
        s.ticks += e->a - f.enter;
        s.callees += f.callees;
      }
      if (!stack.empty()) stack.back().callees += f.callees + 1;
    } else if (observing && kind == RawKind::kTraceBegin) {
      stack.clear();  // a new trace starts at depth 0
    }
  }
}

// Raw timer ticks to ns, from the clock pair taken when culling started.
double ns_per_tick(const Cull& c, const ClockPair& now) {
  if (g_timer != TimerKind::kTsc || now.raw <= c.start.raw) return 1.0;
  return static_cast<double>(now.mono_ns - c.start.mono_ns) /
         static_cast<double>(now.raw - c.start.raw);
}

double span_s(const Window& w, double tick_ns) {
  return w.last_tick > w.first_tick
             ? static_cast<double>(w.last_tick - w.first_tick) * tick_ns / 1e9
             : 0.0;
}

Symbolizer& symbolizer_of(Cull& c) {
  if (!c.symbolizer) c.symbolizer = std::make_unique<Symbolizer>();
  return *c.symbolizer;
}

// As patterns match it (function_name.hpp): the report's lines are patterns.
std::string name_of(Cull& c, const FunctionNames& names, uint64_t address) {
  if (const std::string* known = names ? names(address) : nullptr)
    return std::string(without_return_type(*known));
  return std::string(without_return_type(symbolizer_of(c).resolve(address).name));
}

// Names the candidates, pins those a '+' pattern keeps in, and returns the
// others' addresses, entered in the report as culled.
std::vector<uint64_t> take_candidates(
    Cull& c, const std::vector<std::pair<uint64_t, cull::FunctionSample>>& candidates,
    const FunctionNames& names, uint64_t* culled_calls) {
  const PatternSet patterns = current_function_patterns();
  std::vector<uint64_t> added;
  for (const auto& [address, f] : candidates) {
    std::string name = name_of(c, names, address);
    if (match_patterns(patterns, name) == PatternMatch::kIncluded) {
      c.pinned.insert(address);
      merge(c.pinned_by_name, name, f);
    } else {
      added.push_back(address);
      merge(c.culled_by_name, name, f);
      *culled_calls += f.calls;
    }
  }
  return added;
}

// Excludes `added` on top of what is culled already: the filter is rebuilt
// and published (and XRay unpatches them).
void exclude(Cull& c, const std::vector<uint64_t>& added) {
  c.culled.insert(c.culled.end(), added.begin(), added.end());
  std::sort(c.culled.begin(), c.culled.end());
  set_culled_functions(c.culled);
  c.excluded_any = true;
  c.last_change = ClockPair::now();
  c.calls_since_change = c.culled_since_change = 0;
}

// Whether the function's code bounds its duration (leaf_code.hpp); decoded
// once per function.
bool is_bounded_leaf(Cull& c, uint64_t address) {
  auto it = c.bounded_leaf.find(address);
  if (it != c.bounded_leaf.end()) return it->second;
  const uint64_t size = symbolizer_of(c).function_size(address);
  const LeafVerdict v = classify_function_code(address, size, c.leaf_instructions);
  if (v.retry) return false;  // no verdict now: the window's end judges it
  c.bounded_leaf.emplace(address, v.bounded);
  return v.bounded;
}

// Early culls (cull_ripe) are excluded in batches at least this far
// apart: each exclusion rebuilds the filter and makes the patcher take a
// pass over the code (mprotect, and every core's TLB flushed). Excluding
// them as each slice of 1,024 events ripened some cost SQLite's
// speedtest1 a pass every few hundred microseconds: 14 % of the writer's
// time in mprotect, and probes waited 146-194 ms for buffers
// (2026-11-29). The first batch goes at once.
constexpr int64_t kLeafBatchNs = 5'000'000;

bool ripe_due(Cull& c) {
  if (c.ripe.empty()) return false;
  const int64_t now = monotonic_ns_now();
  if (c.last_leaf_batch_ns != 0 && now - c.last_leaf_batch_ns < kLeafBatchNs) return false;
  c.last_leaf_batch_ns = now;
  return true;
}

// The functions that reached min_calls in the open window since the last
// poll, called at min_rate or more, are culled now rather than when the
// window ends if
// - their code is a straight-line leaf (its duration is bounded by it), or
// - their own mean duration over these calls (the rule's measure) is below
//   cull_early_percent of cull_max_ns: the rule at the window's end would
//   cull them unless their mean grew by that factor meanwhile, after the
//   program had made up to a window's calls of them at full cost. (Their
//   first calls are their slowest, cold: lazy binding, cache and page
//   misses. A rule on every call's duration culled 4 of the 15 functions
//   leveldb's first window culled after its leaves.)
// A window's accounting costs the writer 30-60 ns per event, behind a
// program that makes one every ~10 ns, and these short functions
// (accessors, small templates, comparators, their callers) are most of a
// -finstrument-functions program's calls.
void cull_ripe(Cull& c, const FunctionNames& names) {
  std::vector<uint64_t> ripe;
  ripe.swap(c.ripe);
  // A function can ripen more than once between two polls (at min_calls
  // and at the powers of two past it).
  std::sort(ripe.begin(), ripe.end());
  ripe.erase(std::unique(ripe.begin(), ripe.end()), ripe.end());
  Window& w = *c.window;
  const double tick_ns = ns_per_tick(c, ClockPair::now());
  const double window_s = span_s(w, tick_ns);
  std::vector<std::pair<uint64_t, cull::FunctionSample>> due;
  std::unordered_set<uint64_t> leaves;
  for (uint64_t address : ripe) {
    if (is_culled(c, address) || c.pinned.contains(address)) continue;
    auto it = w.stats.find(address);
    if (it == w.stats.end()) continue;
    const Stats& s = it->second;
    if (cull::calls_per_second(s.calls, window_s) < c.thresholds.min_rate) continue;
    const bool leaf = c.leaf_instructions != 0 && is_bounded_leaf(c, address);
    const cull::FunctionSample f{s.calls, static_cast<double>(s.ticks) * tick_ns, s.callees};
    const bool all_short =
        cull::own_mean_ns(f, c.thresholds.probe_ns) < c.early_share * c.thresholds.max_ns;
    if (!leaf && !all_short) continue;
    if (leaf) leaves.insert(address);
    due.emplace_back(address, f);
  }
  if (due.empty()) return;
  uint64_t calls = 0;
  const std::vector<uint64_t> added = take_candidates(c, due, names, &calls);
  if (added.empty()) return;
  exclude(c, added);
  // Out of the window's statistics, so that its decision neither judges
  // them again nor counts their calls as made after the switch.
  for (uint64_t address : added) {
    Window::CacheEntry& slot = cache_slot(w, address);
    if (slot.address == address) slot = {};
    w.stats.erase(address);
    ++(leaves.contains(address) ? w.leaves : w.short_calls);
  }
  w.early.insert(added.begin(), added.end());
  w.early_calls += calls;
}
}  // namespace

// Ends the current window: applies the rule to the functions it saw (not
// culled or pinned yet), names the new ones, excludes them (unless only
// reporting at exit), and rewrites the report when anything changed.
void decide(Cull& c, bool at_exit, const FunctionNames& names) {
  Window& w = *c.window;
  ClockPair now = ClockPair::now();
  const double tick_ns = ns_per_tick(c, now);
  cull::Round round;
  round.calls = w.calls;
  round.functions = w.early.size();
  round.span_s = span_s(w, tick_ns);
  round.culled = w.early.size();
  round.culled_calls = w.early_calls;
  round.leaves = w.leaves;
  round.short_calls = w.short_calls;
  std::vector<std::pair<uint64_t, cull::FunctionSample>> candidates, rest;
  for (const auto& [address, s] : w.stats) {
    if (w.early.contains(address)) continue;  // counted already
    ++round.functions;
    if (is_culled(c, address)) {
      c.culled_since_change += s.calls;  // in flight at the switch, or not patched
      continue;
    }
    if (c.pinned.contains(address)) continue;
    cull::FunctionSample f{s.calls, static_cast<double>(s.ticks) * tick_ns, s.callees};
    (cull::should_cull(f, round.span_s, c.thresholds) ? candidates : rest).emplace_back(address, f);
  }
  const bool first = c.windows++ == 0;
  std::vector<uint64_t> added;
  size_t pinned_before = c.pinned.size();
  std::map<std::string, cull::ReportEntry> kept;
  if (!candidates.empty() || first) {
    added = take_candidates(c, candidates, names, &round.culled_calls);
    round.culled += added.size();
    // The most called of the kept functions, for the reader of the report.
    std::sort(rest.begin(), rest.end(),
              [](const auto& a, const auto& b) { return a.second.calls > b.second.calls; });
    for (size_t i = 0; i < rest.size() && i < 10; ++i) {
      merge(kept, name_of(c, names, rest[i].first), rest[i].second);
    }
  }
  c.window = std::make_unique<Window>();
  c.ripe.clear();  // judged with the window just decided
  if (c.max_windows != 0 && c.windows >= c.max_windows) c.phase = Phase::kDone;
  if (!at_exit) {
    c.pause_ms = round.culled == 0 ? std::min(std::max<int64_t>(c.window_ms, 2 * c.pause_ms),
                                              kMaxPauseWindows * c.window_ms)
                                   : 0;
    c.resume_ms = monotonic_ns_now() / 1000000 + c.pause_ms;
    c.functions_at_pause = c.functions_seen;
    // Events before this decision are not observed any more (observe()),
    // so frames entered before it are not seen to their end: a later exit
    // must not match a stale frame.
    c.observe_from = now.raw;
    for (auto& [index, stack] : c.stacks) stack.clear();
  }
  if (!at_exit && !added.empty()) {
    exclude(c, added);
    // From the filter's publication: calls made while it was being built
    // (13-19 ms for the first in a leveldb run, before 2026-11-29) were
    // still recorded and filled the next window with culled functions.
    c.observe_from = c.last_change.raw;
  }
  if (!first && round.culled == 0 && c.pinned.size() == pinned_before) return;
  // The report: the first window always, later ones when they decided something.
  cull::Report& r = c.report;
  r.thresholds = c.thresholds;
  r.leaf_instructions = c.leaf_instructions;
  r.early_share = c.early_share;
  r.rounds.push_back(round);
  r.culled = sorted_entries(c.culled_by_name);
  r.pinned = sorted_entries(c.pinned_by_name);
  if (!added.empty() || first) r.kept = sorted_entries(kept);
  if (first) {
    ProcessInfo p = describe_process(current_config());
    r.source = "pid " + std::to_string(p.pid) + " (" + p.executable + ")";
    r.notes.push_back(
        at_exit ? (round.leaves + round.short_calls == 0
                       ? "The program ended during the first window: decided on what it "
                         "recorded, nothing was excluded in this run."
                       : "The program ended during the first window: decided on what it "
                         "recorded, only what was culled before the window's end (leaves, "
                         "functions short from their first calls) was excluded in this run.")
                : "Windows of " + cull::grouped(c.window_calls) + " monitored calls or " +
                      std::to_string(c.window_ms) +
                      " ms (cull_phase_calls, cull_phase_ms), each one a round below if it "
                      "culled anything.");
  }
  c.decided_at_exit = at_exit;
  write_report(c);
}

}  // namespace culling

using namespace culling;

void cull_observe(const ThreadChannel& ch, const RawEvent* begin, const RawEvent* end,
                  uint64_t functions_seen, const FunctionNames& names, bool may_decide) {
  Cull& c = cull_state();
  MonitorLock lock(c.mu);
  if (c.phase == Phase::kUnstarted) start_culling(c);
  c.functions_seen = functions_seen;
  if (begin != end) c.last_events_ms = monotonic_ns_now() / 1000000;
  std::vector<Frame>& stack = c.stacks[ch.index];
  // In slices, with the decisions that fall due between them: a writer
  // behind the program drains many buffers per turn, and the program went
  // on recording what was due to be culled until the turn's end (leveldb:
  // leaves seen 100 times were recorded 145,000 times; deciding between
  // buffers, 80,000; every 1,024 events, see docs/cull.md).
  constexpr ptrdiff_t kSlice = 1024;
  for (const RawEvent* at = begin; at < end;) {
    const RawEvent* upto = end - at > kSlice ? at + kSlice : end;
    if (may_decide && c.phase == Phase::kObserving) {
      if (ripe_due(c)) cull_ripe(c, names);
      if (c.window->start_ms >= 0 && c.window->calls >= c.window_calls) {
        decide(c, /*at_exit=*/false, names);
      }
    }
    bool observing = c.phase == Phase::kObserving;
    if (observing && c.resume_ms != 0 && monotonic_ns_now() / 1000000 < c.resume_ms) {
      if (functions_seen > c.functions_at_pause) {
        c.resume_ms = 0;  // new functions: observe from here on
        ++c.pauses_cut;
      } else {
        observing = false;
      }
    }
    if (!observing && !c.excluded_any) return;
    observe(c, stack, at, upto, observing);
    at = upto;
  }
}

void cull_poll(int64_t now_ms, const FunctionNames& names) {
  Cull& c = cull_state();
  MonitorLock lock(c.mu);
  if (c.phase == Phase::kUnstarted) start_culling(c);
  if (c.phase != Phase::kObserving || c.window->start_ms < 0) return;
  if (ripe_due(c)) cull_ripe(c, names);
  if (c.window->calls < c.window_calls && now_ms - c.window->start_ms < c.window_ms) return;
  decide(c, /*at_exit=*/false, names);
}

bool cull_wants_fresh_events(int64_t now_ms) {
  Cull& c = cull_state();
  MonitorLock lock(c.mu);
  // Only while events come: an idle program (a server between requests)
  // must not wake the writer every millisecond.
  constexpr int64_t kQuietMs = 100;
  return c.phase == Phase::kObserving && (c.resume_ms == 0 || now_ms >= c.resume_ms) &&
         c.last_events_ms >= 0 && now_ms - c.last_events_ms < kQuietMs;
}

}  // namespace sonde::monitor
