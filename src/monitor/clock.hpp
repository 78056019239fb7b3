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
class Calibration {
 public:
  void start();   // takes the first reference pair
  void refine();  // takes a new pair and updates ns_per_tick
  int64_t to_epoch_ns(uint64_t raw) const {
    return ref_epoch_ns_ +
           static_cast<int64_t>(static_cast<double>(static_cast<int64_t>(raw - ref_raw_)) *
                                ns_per_tick_);
  }
  uint64_t ref_raw() const { return ref_raw_; }
  int64_t ref_epoch_ns() const { return ref_epoch_ns_; }
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  static void pair(uint64_t* raw, int64_t* mono_ns, int64_t* epoch_ns);
  uint64_t start_raw_ = 0;
  int64_t start_mono_ = 0;
  uint64_t ref_raw_ = 0;
  int64_t ref_epoch_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace sonde::monitor
