// Per-function on/off decisions for -finstrument-functions probes, built off
// the hot path from the current patterns: every function symbol of every
// loaded module is matched once, and the probe looks its address up in an
// immutable open-addressing table. No table (no patterns) means "all on".
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "monitor/patterns.hpp"

namespace sonde::monitor {

struct FunctionFilter {
  uint64_t mask;       // table size - 1 (power of two)
  uint64_t* keys;      // function addresses; 0 = empty
  uint8_t* monitored;  // decision per slot

  bool allows(uint64_t address) const {
    uint64_t h = (address * 0x9E3779B97F4A7C15ULL) >> 20;
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      if (keys[i] == address) return monitored[i] != 0;
      if (keys[i] == 0) return true;  // unknown function (loaded later): monitored
    }
  }
};

extern std::atomic<const FunctionFilter*> g_function_filter;

// Rebuilds the table for `patterns` (or clears it when they are empty).
void rebuild_function_filter(const PatternSet& patterns);
// Re-reads patterns_file when its contents changed (called by the writer thread).
void poll_patterns_file();
// The patterns_file contents applied at start-up, so the first poll compares against them.
void note_patterns_file_text(std::string text);

}  // namespace sonde::monitor
