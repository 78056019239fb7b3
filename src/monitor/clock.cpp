#include "monitor/clock.hpp"

#include <cpuid.h>

#include <algorithm>
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
  cur_ = Segment{start_raw_, epoch, 1.0};
  if (g_timer == TimerKind::kTsc) {
    // A first estimate over 2 ms; refine() improves it as the run goes on.
    uint64_t raw;
    int64_t mono;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
    pair(&raw, &mono, &epoch);
    if (raw > start_raw_) {
      cur_.ns_per_tick =
          static_cast<double>(mono - start_mono_) / static_cast<double>(raw - start_raw_);
    }
  }
  prev_ = cur_;
}

void Calibration::refine() {
  uint64_t raw;
  int64_t mono, epoch;
  pair(&raw, &mono, &epoch);
  if (static_cast<int64_t>(raw - cur_.raw) <= 0) return;  // no tick since the last pair
  Segment next = cur_;
  if (g_timer == TimerKind::kTsc && raw > start_raw_) {
    next.ns_per_tick =
        static_cast<double>(mono - start_mono_) / static_cast<double>(raw - start_raw_);
  }
  // Re-anchor at the newest pair where the current segment is there, or
  // later if the wall clock is ahead (NTP steps, the estimate's error).
  next.raw = raw;
  next.epoch_ns = std::max(epoch, to_epoch_ns(raw));
  prev_ = cur_;
  cur_ = next;
}

}  // namespace sonde::monitor
