// Workloads with known timing for the flight recorder's tests
// (flight_recorder_test.cpp), all with manual probes:
//
//   test_flight window N GAP_MS
//     N traces "old.request", a pause of GAP_MS, N traces "new.request",
//     sonde_snapshot("first"), a pause of GAP_MS, N traces "late.request",
//     sonde_snapshot("second"), a pause of GAP_MS. With a window shorter
//     than GAP_MS the first snapshot holds exactly the new requests and the
//     second exactly the late ones.
//   test_flight slow N SLOW_MS
//     N fast traces "fast.request", one "slow.request" of SLOW_MS (it calls
//     "slow.step" inside), N fast ones, a second slow one right after the
//     first, then a pause of 4 x SLOW_MS.
//   test_flight signal N
//     N traces "signalled.request", then SIGUSR2 to itself, then a pause.
//   test_flight connection N
//     one "connection.loop" around N calls "inner.request", then
//     sonde_snapshot("end") from inside the loop and a pause.
//   test_flight serve SECONDS
//     a trace "served.request" every millisecond for SECONDS (a server for
//     `sonde snapshot PID`).
//   test_flight steady N
//     N traces of three nested calls as fast as it can; prints its resident
//     memory (kB) after the first tenth of them and at the end:
//     "rss_kb FIRST LAST" on stderr.
//   test_flight abort N
//     N traces "doomed.request", then abort().
//   test_flight context-train N FAST_MS SLOW_MS
//     N times: a trace "path.fast" calling "work" for FAST_MS, and a trace
//     "path.slow" calling "work" for SLOW_MS (two calling contexts of one
//     operation, for a saved context model).
//   test_flight context-wide N SLOW_MS
//     one trace "path.fast" calling "work" N times for 0 ms, then one
//     "path.slow" of SLOW_MS, then a pause.
//   test_flight context N FAST_MS SLOW_MS PLANT
//     N traces "path.slow" (SLOW_MS: slow but normal for their context);
//     with PLANT 1, then one "path.fast" whose "work" takes SLOW_MS (as slow,
//     but far outside its context); then a pause.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "sonde/sonde.hpp"

namespace {

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void requests(const char* which, int n) {
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(which, "old") == 0) {
      SONDE_SCOPE_NAMED("old.request");
    } else if (std::strcmp(which, "new") == 0) {
      SONDE_SCOPE_NAMED("new.request");
    } else if (std::strcmp(which, "late") == 0) {
      SONDE_SCOPE_NAMED("late.request");
    } else if (std::strcmp(which, "fast") == 0) {
      SONDE_SCOPE_NAMED("fast.request");
    } else {
      SONDE_SCOPE_NAMED("signalled.request");
    }
  }
}

void slow_request(int ms) {
  SONDE_SCOPE_NAMED("slow.request");
  SONDE_SCOPE_NAMED("slow.step");
  pause_ms(ms);
}

void work(int ms) {
  SONDE_SCOPE_NAMED("work");
  pause_ms(ms);
}
void path_fast(int work_ms) {
  SONDE_SCOPE_NAMED("path.fast");
  work(work_ms);
}
void path_wide(int calls) {
  SONDE_SCOPE_NAMED("path.fast");
  for (int i = 0; i < calls; ++i) work(0);
}
void path_slow(int work_ms) {
  SONDE_SCOPE_NAMED("path.slow");
  work(work_ms);
}

long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

[[gnu::noinline]] int leaf(int x) {
  SONDE_SCOPE_NAMED("steady.leaf");
  return x + 1;
}
[[gnu::noinline]] int middle(int x) {
  SONDE_SCOPE_NAMED("steady.middle");
  return leaf(x) * 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test_flight window|slow|signal|steady ...\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int n = std::atoi(argv[2]);
  if (mode == "window" && argc >= 4) {
    const int gap = std::atoi(argv[3]);
    requests("old", n);
    pause_ms(gap);
    requests("new", n);
    if (sonde_snapshot("first") != 0) return 3;
    pause_ms(gap);
    requests("late", n);
    if (sonde_snapshot("second") != 0) return 3;
    pause_ms(gap);
    return 0;
  }
  if (mode == "slow" && argc >= 4) {
    const int slow = std::atoi(argv[3]);
    requests("fast", n);
    slow_request(slow);
    requests("fast", n);
    slow_request(slow);
    pause_ms(4 * slow);
    return 0;
  }
  if (mode == "signal") {
    requests("signalled", n);
    ::kill(::getpid(), SIGUSR2);
    pause_ms(1000);
    return 0;
  }
  if (mode == "connection") {
    {
      SONDE_SCOPE_NAMED("connection.loop");
      for (int i = 0; i < n; ++i) {
        SONDE_SCOPE_NAMED("inner.request");
      }
      if (sonde_snapshot("end") != 0) return 3;
      pause_ms(500);
    }
    return 0;
  }
  if (mode == "serve") {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(n);
    while (std::chrono::steady_clock::now() < end) {
      { SONDE_SCOPE_NAMED("served.request"); }
      pause_ms(1);
    }
    return 0;
  }
  if (mode == "abort") {
    for (int i = 0; i < n; ++i) {
      SONDE_SCOPE_NAMED("doomed.request");
    }
    std::abort();
  }
  if (mode == "context-train" && argc >= 5) {
    for (int i = 0; i < n; ++i) {
      path_fast(std::atoi(argv[3]));
      path_slow(std::atoi(argv[4]));
    }
    return 0;
  }
  if (mode == "context-wide" && argc >= 4) {
    path_wide(n);
    path_slow(std::atoi(argv[3]));
    pause_ms(500);
    return 0;
  }
  if (mode == "context" && argc >= 6) {
    const int slow = std::atoi(argv[4]);
    for (int i = 0; i < n; ++i) path_slow(slow);
    if (std::atoi(argv[5]) != 0) path_fast(slow);
    pause_ms(500);
    return 0;
  }
  if (mode == "steady") {
    long first = -1;
    volatile unsigned sink = 0;
    for (long i = 0; i < n; ++i) {
      {
        SONDE_SCOPE_NAMED("steady.request");
        sink = sink + static_cast<unsigned>(middle(static_cast<int>(i & 0xffff)));
      }
      if (i == n / 10) first = rss_kb();
    }
    std::fprintf(stderr, "rss_kb %ld %ld\n", first, rss_kb());
    return 0;
  }
  std::fprintf(stderr, "test_flight: unknown mode %s\n", mode.c_str());
  return 2;
}
