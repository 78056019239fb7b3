// Probe cost in the MooBench shape: monitoredMethod(depth) recurses `depth`
// levels (each level a real, non-inlined call), repeated CALLS times; the
// second half of the calls is timed (the first half is warm-up). Prints
// nanoseconds per monitored call. Built three ways (see CMakeLists.txt):
// without probes, with a manual probe, and with -finstrument-functions.
//   probe_cost CALLS DEPTH
#include <time.h>

#include <cstdio>
#include <cstdlib>

#if defined(SONDE_BENCH_MANUAL)
#include "sonde/sonde.hpp"
#define BENCH_PROBE() SONDE_SCOPE_NAMED("bench.monitoredMethod")
#else
#define BENCH_PROBE()
#endif

[[gnu::noinline]] long monitored_method(int depth) {
  BENCH_PROBE();
  if (depth <= 1) return 1;
  long r = monitored_method(depth - 1);
  asm volatile("" : "+r"(r));  // keeps the call a real call, not a tail call
  return r + 1;
}

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  int depth = argc > 2 ? std::atoi(argv[2]) : 10;
  long sink = 0;
  for (long i = 0; i < calls / 2; ++i) sink += monitored_method(depth);
  double start = now_ns();
  for (long i = calls / 2; i < calls; ++i) sink += monitored_method(depth);
  double elapsed = now_ns() - start;
  std::printf("%.3f\n", elapsed / static_cast<double>((calls - calls / 2) * depth));
  return sink == 0 ? 1 : 0;
}
