#include "monitor/clock.hpp"

#include <cpuid.h>

#include <chrono>

namespace sonde::monitor {

TimerKind g_timer = TimerKind::kMonotonic;

bool tsc_is_invariant() {
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;
}

void select_timer(bool allow_tsc) {
  g_timer = allow_tsc && tsc_is_invariant() ? TimerKind::kTsc : TimerKind::kMonotonic;
}

const char* timer_name() { return g_timer == TimerKind::kTsc ? "tsc" : "clock_monotonic"; }

int64_t epoch_ns_now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t monotonic_ns_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void Calibration::pair(uint64_t* raw, int64_t* mono_ns, int64_t* epoch_ns) {
  // Bracket the clock reads with two raw reads and keep the tightest of a few
  // tries, so a preemption between the reads does not skew the pair.
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t r0 = now_raw();
    int64_t m = monotonic_ns_now();
    int64_t e = epoch_ns_now();
    uint64_t r1 = now_raw();
    if (r1 - r0 < best_gap) {
      best_gap = r1 - r0;
      *raw = r0 + (r1 - r0) / 2;
      *mono_ns = m;
      *epoch_ns = e;
    }
  }
}

void Calibration::start() {
  int64_t epoch;
  pair(&start_raw_, &start_mono_, &epoch);
  ref_raw_ = start_raw_;
  ref_epoch_ns_ = epoch;
  if (g_timer == TimerKind::kMonotonic) {
    ns_per_tick_ = 1.0;
    return;
  }
  // A first estimate over 2 ms; refine() improves it as the run goes on.
  uint64_t raw;
  int64_t mono;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < until) {
  }
  pair(&raw, &mono, &epoch);
  if (raw > start_raw_)
    ns_per_tick_ = static_cast<double>(mono - start_mono_) / static_cast<double>(raw - start_raw_);
}

void Calibration::refine() {
  uint64_t raw;
  int64_t mono, epoch;
  pair(&raw, &mono, &epoch);
  if (g_timer == TimerKind::kTsc && raw > start_raw_) {
    ns_per_tick_ = static_cast<double>(mono - start_mono_) / static_cast<double>(raw - start_raw_);
  }
  // Re-anchor at the newest pair: conversions stay continuous to within the
  // estimate's error, and epoch time follows NTP adjustments.
  ref_raw_ = raw;
  ref_epoch_ns_ = epoch;
}

}  // namespace sonde::monitor
