// Timestamps for probes: raw TSC where it is invariant (~10 ns), otherwise
// CLOCK_MONOTONIC (~25 ns). Raw values are converted to epoch nanoseconds off
// the hot path with a calibration refined by the writer thread.
#pragma once

#include <time.h>
#include <x86intrin.h>

#include <cstdint>

namespace sonde::monitor {

enum class TimerKind : uint8_t { kTsc, kMonotonic };

// Chosen once at start-up, before any probe runs.
extern TimerKind g_timer;

[[gnu::always_inline]] inline uint64_t now_raw() {
  if (g_timer == TimerKind::kTsc) [[likely]]
    return __rdtsc();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// True if CPUID reports an invariant TSC (constant rate, runs in all C-states).
bool tsc_is_invariant();
void select_timer(bool allow_tsc);
const char* timer_name();

int64_t epoch_ns_now();
int64_t monotonic_ns_now();

// Maps raw timer values to epoch ns: a reference pair plus the tick length,
// re-estimated from pairs taken further and further apart.
//
// The mapping stays monotonic across refinements, so that no trace's time
// goes backwards: a new segment starts where the current one is at its
// reference tick (or later, to follow the wall clock forward; a backward
// step of the wall clock is not followed during a run), and timer values
// from before the newest reference tick (events still in a thread's buffer
// when the writer refined) are converted with the segment they fall in.
// Readers of the native format do the same (docs/formats/native.md).
class Calibration {
 public:
  void start();   // takes the first reference pair
  void refine();  // takes a new pair and updates ns_per_tick
  int64_t to_epoch_ns(uint64_t raw) const {
    const Segment& s = static_cast<int64_t>(raw - cur_.raw) >= 0 ? cur_ : prev_;
    return s.epoch_ns + static_cast<int64_t>(
                            static_cast<double>(static_cast<int64_t>(raw - s.raw)) * s.ns_per_tick);
  }
  uint64_t ref_raw() const { return cur_.raw; }
  int64_t ref_epoch_ns() const { return cur_.epoch_ns; }
  double ns_per_tick() const { return cur_.ns_per_tick; }

 private:
  struct Segment {
    uint64_t raw = 0;
    int64_t epoch_ns = 0;
    double ns_per_tick = 1.0;
  };
  static void pair(uint64_t* raw, int64_t* mono_ns, int64_t* epoch_ns);
  uint64_t start_raw_ = 0;
  int64_t start_mono_ = 0;
  Segment cur_;
  Segment prev_;
};

}  // namespace sonde::monitor
