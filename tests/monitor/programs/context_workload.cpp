// A workload with planted calling-context timing, for `sonde context`:
//   context_workload [ITERATIONS]   (default 100)
// Each iteration starts five traces, one per entry operation:
//   ctx.A -> ctx.work            work busy-waits 20 µs (fast caller)
//   ctx.B -> ctx.work            work busy-waits 200 µs (slow caller)
//   ctx.C -> ctx.step, ctx.step  the first step 20 µs, the second 200 µs:
//                                same caller and stack, only the position
//                                in the trace tells them apart
//   ctx.D -> ctx.same            100 µs
//   ctx.E -> ctx.same            100 µs: two callers, one distribution
// The waits spin on the steady clock (not sleep), so the durations stay
// distinct even when the scheduler is busy; 100 iterations take ~65 ms.
#include <chrono>
#include <cstdlib>

#include "sonde/sonde.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void spin(std::chrono::microseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

constexpr std::chrono::microseconds kFast{20}, kSlow{200}, kSame{100};

[[gnu::noinline]] void work(std::chrono::microseconds d) {
  SONDE_SCOPE_NAMED("ctx.work");
  spin(d);
}
[[gnu::noinline]] void step(std::chrono::microseconds d) {
  SONDE_SCOPE_NAMED("ctx.step");
  spin(d);
}
[[gnu::noinline]] void same() {
  SONDE_SCOPE_NAMED("ctx.same");
  spin(kSame);
}

[[gnu::noinline]] void a() {
  SONDE_SCOPE_NAMED("ctx.A");
  work(kFast);
}
[[gnu::noinline]] void b() {
  SONDE_SCOPE_NAMED("ctx.B");
  work(kSlow);
}
[[gnu::noinline]] void c() {
  SONDE_SCOPE_NAMED("ctx.C");
  step(kFast);
  step(kSlow);
}
[[gnu::noinline]] void d() {
  SONDE_SCOPE_NAMED("ctx.D");
  same();
}
[[gnu::noinline]] void e() {
  SONDE_SCOPE_NAMED("ctx.E");
  same();
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 100;
  for (int i = 0; i < iterations; ++i) {
    a();
    b();
    c();
    d();
    e();
  }
  return 0;
}
