// Culling's state, shared by its decisions (cull.cpp) and its report and
// exit summary (cull_report.cpp). Internal to libsonde; every function here
// runs with Cull::mu held.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "monitor/clock.hpp"
#include "monitor/cull.hpp"
#include "monitor/cull_rule.hpp"
#include "monitor/symbolizer.hpp"

namespace sonde::monitor::culling {

// kObserving: windows follow one another, each ending in a decision. kDone:
// cull_rounds windows are over; only the calls are still counted.
enum class Phase { kUnstarted, kOff, kObserving, kDone };

struct Frame {
  uint64_t key;      // function address, or manual operation id | kOpTag
  uint64_t enter;    // raw timestamp
  uint64_t callees;  // monitored calls inside it so far
};

struct Stats {
  uint64_t calls = 0;
  uint64_t ticks = 0;  // sum of inclusive durations, raw timer ticks
  uint64_t callees = 0;
};

// A raw timestamp and the monotonic clock read together: two of them give
// the tick length without Calibration's 2-ms busy wait.
struct ClockPair {
  uint64_t raw = 0;
  int64_t mono_ns = 0;
  static ClockPair now() { return {now_raw(), monotonic_ns_now()}; }
};

// One observation window: from its first monitored call until
// cull_phase_calls calls or cull_phase_ms, whichever comes first.
struct Window {
  int64_t start_ms = -1;  // monotonic ms of its first call; -1: none yet
  uint64_t calls = 0;
  uint64_t first_tick = 0, last_tick = 0;
  std::unordered_map<uint64_t, Stats> stats;  // by function address
  struct CacheEntry {
    uint64_t address = 0;
    Stats* stats = nullptr;
  };
  std::array<CacheEntry, 1024> cache{};
  // Functions culled before the window ended (cull_ripe), and their calls,
  // for its round in the report: straight-line leaves, and others whose
  // mean was short from their first calls (cull_early_percent). Their
  // calls made before the exclusion was published, drained later, come
  // back into `stats`; the window's decision skips them.
  std::unordered_set<uint64_t> early;
  uint64_t early_calls = 0;
  size_t leaves = 0;       // of `early`
  size_t short_calls = 0;  // of `early`
};

struct Cull {
  std::mutex mu;
  Phase phase = Phase::kUnstarted;
  cull::Thresholds thresholds;
  uint64_t window_calls = 0;
  int64_t window_ms = 0;
  uint32_t max_windows = 0;                                 // 0: for the whole run
  ClockPair start;                                          // with a later pair: the tick length
  std::unordered_map<uint32_t, std::vector<Frame>> stacks;  // by ThreadChannel::index
  std::unique_ptr<Window> window = std::make_unique<Window>();
  uint32_t windows = 0;  // decided so far
  // After a window that culled nothing new, observation pauses (no
  // per-event work but the call count) for a while that doubles with each
  // such window, up to kMaxPauseWindows windows' length: a program whose
  // hot helpers are gone costs the writer next to nothing, and one that
  // gets new hot functions later is still caught. A window that culls
  // something ends the pauses.
  // A pause also ends as soon as the writer meets a function it had not
  // seen when the pause began: new code runs (leveldb's db_bench moves from
  // building its test data to fillseq's helpers), and its hot helpers would
  // otherwise be traced in full until the pause ran out.
  int64_t pause_ms = 0;
  int64_t resume_ms = 0;  // monotonic ms; observation paused before it
  uint64_t functions_at_pause = 0;
  uint64_t functions_seen = 0;  // as of the last cull_observe
  uint32_t pauses_cut = 0;      // pauses ended early by new functions
  // What was decided, over all windows.
  std::vector<uint64_t> culled;  // sorted addresses
  std::unordered_set<uint64_t> pinned;
  std::map<std::string, cull::ReportEntry> culled_by_name, pinned_by_name;
  cull::Report report;
  std::string report_path;
  std::string report_error;
  bool decided_at_exit = false;  // the first window was still open at exit
  bool inherited = false;        // a forked child of a process that had culled
  // Names functions the log has not named (the null writer names nothing).
  std::unique_ptr<Symbolizer> symbolizer;
  // Since the last exclusion (measured monitored-call rate).
  bool excluded_any = false;
  ClockPair last_change;
  uint64_t calls_since_change = 0;
  uint64_t culled_since_change = 0;  // calls of culled functions in flight at the switch
  // Raw time of the last decision: earlier events are not observed.
  uint64_t observe_from = 0;
  // Functions that reached min_calls in the open window, judged before it
  // ends by their code (leaves, leaf_code.hpp) or by their mean so far
  // (cull_early_percent); and the leaf verdicts so far.
  uint32_t leaf_instructions = 0;  // cull_leaf_instructions; 0: off
  double early_share = 0;          // cull_early_percent / 100; 0: off
  std::vector<uint64_t> ripe;
  std::unordered_map<uint64_t, bool> bounded_leaf;
  int64_t last_leaf_batch_ns = 0;  // monotonic; 0: none yet
  int64_t last_events_ms = -1;     // monotonic ms the writer last drained events; -1: never
};

// The longest pause, in windows (cull_phase_ms) of observation.
constexpr int64_t kMaxPauseWindows = 16;

inline Cull& cull_state() {
  static Cull* c = new Cull;  // never destroyed: the writer may run during exit
  return *c;
}

inline bool is_culled(const Cull& c, uint64_t address) {
  return std::binary_search(c.culled.begin(), c.culled.end(), address);
}

// cull.cpp: ends the open window with a decision (at_exit: the program is
// ending during its first window).
void decide(Cull& c, bool at_exit, const FunctionNames& names);

// cull_report.cpp: the report file (c.report_path, or c.report_error).
void write_report(Cull& c);
void merge(std::map<std::string, cull::ReportEntry>& into, const std::string& name,
           const cull::FunctionSample& f);
std::vector<cull::ReportEntry> sorted_entries(const std::map<std::string, cull::ReportEntry>& m);

}  // namespace sonde::monitor::culling
