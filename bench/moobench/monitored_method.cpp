// MooBench's monitored application: monitoredMethod recurses to
// `recursion_depth` and busy-waits `method_time_ns` at the deepest level.
// Every level is a real call (noinline, and the asm barrier after the
// recursive call rules out tail-call elimination), so a depth-10 call is ten
// monitored calls. Compiled three ways (CMakeLists.txt): plain, with a manual
// probe (SONDE_BENCH_MANUAL), with -finstrument-functions, and (if clang++
// with XRay is present) with -fxray-instrument; the driver is
// a separate, never instrumented translation unit.
#include <time.h>

#include <cstdint>

#include "moobench.hpp"

#if defined(SONDE_BENCH_MANUAL)
#include "sonde/sonde.hpp"
#define BENCH_PROBE() SONDE_SCOPE_NAMED("moobench.monitoredMethod")
#else
#define BENCH_PROBE()
#endif

// The busy-wait helpers are not monitored operations in any build.
#if defined(__clang__)
#define BENCH_NOT_MONITORED [[gnu::no_instrument_function, clang::xray_never_instrument]]
#else
#define BENCH_NOT_MONITORED [[gnu::no_instrument_function]]
#endif

namespace {

// Not instrumented in the -finstrument-functions build: only
// monitoredMethod is the monitored operation.
BENCH_NOT_MONITORED inline uint64_t busy_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

BENCH_NOT_MONITORED void busy_wait(uint64_t ns) {
  const uint64_t until = busy_now_ns() + ns;
  while (busy_now_ns() < until) {
  }
}

}  // namespace

extern "C" [[gnu::noinline]] uint64_t monitoredMethod(uint64_t method_time_ns,
                                                      int recursion_depth) {
  BENCH_PROBE();
  if (recursion_depth <= 1) {
    if (method_time_ns > 0) busy_wait(method_time_ns);
    return method_time_ns;
  }
  uint64_t r = monitoredMethod(method_time_ns, recursion_depth - 1);
  asm volatile("" : "+r"(r));  // the result is "used" after the call: no tail call
  return r + 1;
}
