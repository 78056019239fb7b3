// Per-function on/off decisions for -finstrument-functions probes, built off
// the hot path from the current patterns and the culled functions
// (cull.hpp): every function symbol of every loaded module is matched once,
// and the probe looks its address up in an immutable open-addressing table
// of the excluded ones. No table (nothing excluded) means "all on".
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "monitor/patterns.hpp"

namespace sonde::monitor {

struct FunctionFilter {
  uint64_t mask;       // table size - 1 (power of two)
  uint64_t* keys;      // function addresses; 0 = empty
  uint8_t* monitored;  // decision per slot
  // Per slot: monotonic_ns_now() from which the function's exit hook calls
  // may be patched out (its exclusion's grace period; callsite_patch.hpp).
  // Not read by probes.
  int64_t* exits_due_ns;

  static constexpr uint64_t kAbsent = ~uint64_t{0};

  // The slot holding `address`, or kAbsent.
  uint64_t slot_of(uint64_t address) const {
    uint64_t h = (address * 0x9E3779B97F4A7C15ULL) >> 20;
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      if (keys[i] == address) return i;
      if (keys[i] == 0) return kAbsent;
    }
  }
  bool allows(uint64_t address) const {
    const uint64_t i = slot_of(address);
    return i == kAbsent || monitored[i] != 0;  // absent: not excluded (or loaded later)
  }
  // When `address`'s exit hook calls may be patched out; 0 if it is not
  // excluded here.
  int64_t exit_due_ns(uint64_t address) const {
    const uint64_t i = slot_of(address);
    return i == kAbsent ? 0 : exits_due_ns[i];
  }
};

extern std::atomic<const FunctionFilter*> g_function_filter;

// Rebuilds the table for `patterns` and the culled functions (or clears it
// when nothing is excluded). Remembers `patterns` for later cull decisions.
// `before_recording`: nothing has been recorded yet (start-up), so no frame
// can be open and exit hook calls may be patched at once.
void rebuild_function_filter(const PatternSet& patterns, bool before_recording = false);
// Re-reads patterns_file when its contents changed (called by the writer thread).
void poll_patterns_file();
// The patterns_file contents applied at start-up, so the first poll compares against them.
void note_patterns_file_text(std::string text);

// Which rule decides `name`: the last matching one, as PatternSet::monitored
// reads them. kNone (no rule matches) is what culling may override; a '+'
// rule pins a function in, a '-' rule excludes it whatever culling says.
enum class PatternMatch : uint8_t { kNone, kIncluded, kExcluded };
PatternMatch match_patterns(const PatternSet& patterns, std::string_view name);

// Culling (cull.cpp): these functions are excluded in addition to what the
// patterns exclude, except those a '+' pattern pins. Rebuilds the table and
// re-applies the XRay patching with the current patterns.
void set_culled_functions(std::vector<uint64_t> addresses);
bool function_culled(uint64_t address);
// The patterns the table was last built from.
PatternSet current_function_patterns();

}  // namespace sonde::monitor
