// Built with -finstrument-functions and without sonde, for the culling tests
// (tests/monitor/cull_end_to_end_test.cpp, tests/cli/cull_test.cpp): a tiny
// helper called a thousand times per request, and a request that is busy
// for at least 50 µs on its own, far longer than any culling threshold.
//
//   test_cull REQUESTS [wait|nowait|settle]
//   test_cull REQUESTS repattern FILE
//   test_cull REQUESTS phases
//   test_cull REQUESTS tail  |  test_cull REQUESTS repattern FILE tail
//   test_cull REQUESTS settle stall
//
// First phase (`wait`, the default when SONDE_OUT is set): requests until
// libsonde's cull report (*.cull.txt) appears in SONDE_OUT, or for 20 s.
// Then exactly REQUESTS more. stderr: "warmup=W requests=N result=R", where
// R is the checksum of the last N requests only: the same with or without
// sonde, and with or without patched call sites. `repattern`: no first
// phase; after half the requests, FILE (the patterns_file) is rewritten to
// "+helper*" (after 150 ms, past the exit hooks' grace period) and the
// program waits 1 s for libsonde to re-read it.
// `settle`: no first phase; after a tenth of the requests, two
// sonde_flush() calls return only once the writer has read their events
// and polled culling since, so that what those calls made ripe is culled
// before the rest run, however busy the machine: with `nowait`, a CI run
// under load (2026-12-02) ended all 2,000 requests in 0.23 s before the
// writer had looked at their events.
// `phases`: after the first phase, 400 ms (and at least 4,000) more of the
// same requests and two sonde_flush() calls (the next window culls
// nothing, so observation pauses), then the REQUESTS
// run code not seen before: other_request, calling other_helper, which a
// pause must not leave traced in full; two more sonde_flush() calls after
// a tenth of them, as with `settle`.
// `tail` (last argument): the requests call helper_tail instead, a void
// helper whose exit hook call g++ -O2 compiles as a tail jump (`jmp
// __cyg_profile_func_exit`), which culling patches to `ret`
// (src/monitor/tail_exits.hpp).
// `stall` (last argument): the requests call helper_stall instead, as
// short as helper except for its 50th call, which sleeps 5 ms: a
// preemption among a function's first calls, made deterministic.
#include <dirent.h>
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

[[gnu::noinline]] unsigned helper(unsigned x) { return x * 2654435761u + 1; }

[[gnu::noinline]] void helper_tail(unsigned* x) { *x = *x * 2654435761u + 1; }

int g_stall_countdown = 50;

[[gnu::noinline]] unsigned helper_stall(unsigned x) {
  if (--g_stall_countdown == 0) {
    timespec pause{0, 5000000};
    nanosleep(&pause, nullptr);
  }
  return x * 2654435761u + 1;
}

bool g_tail = false;
bool g_stall = false;

[[gnu::noinline]] unsigned request(unsigned seed, int helpers) {
  unsigned h = seed;
  if (g_tail) {
    for (int i = 0; i < helpers; ++i) helper_tail(&h);
  } else if (g_stall) {
    for (int i = 0; i < helpers; ++i) h = helper_stall(h);
  } else {
    for (int i = 0; i < helpers; ++i) h = helper(h);
  }
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec);
    if (elapsed >= 50000) break;
  }
  return h;
}

[[gnu::noinline]] unsigned other_helper(unsigned x) { return x * 40503u + 7; }

[[gnu::noinline]] unsigned other_request(unsigned seed) {
  unsigned h = seed;
  for (int i = 0; i < 1000; ++i) h = other_helper(h);
  return h;
}

namespace {

// Both flushes: the first returns once a writer iteration has drained the
// buffers, possibly before that iteration's cull poll; the second only
// after an iteration that began after the first, i.e. after that poll.
[[gnu::no_instrument_function]] void flush_twice() {
  using Flush = int (*)();
  if (auto flush = reinterpret_cast<Flush>(dlsym(RTLD_DEFAULT, "sonde_flush"))) {
    flush();
    flush();
  }
}

[[gnu::no_instrument_function]] bool report_exists(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    size_t n = std::strlen(e->d_name);
    if (n > 9 && std::strcmp(e->d_name + n - 9, ".cull.txt") == 0) found = true;
  }
  closedir(d);
  return found;
}

[[gnu::no_instrument_function]] double seconds_now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Written aside and renamed, so libsonde never reads half a file; then a
// pause far longer than patterns_reload_ms.
[[gnu::no_instrument_function]] void rewrite_patterns(const char* path, const char* text) {
  std::string temp = std::string(path) + ".new";
  if (FILE* f = std::fopen(temp.c_str(), "w")) {
    std::fputs(text, f);
    std::fclose(f);
    std::rename(temp.c_str(), path);
  }
  timespec pause{1, 0};
  nanosleep(&pause, nullptr);
  // Under ASan the writer may still be busy (naming functions) after the
  // pause and not have re-read the file (seen 2026-12-02, as with the XRay
  // program): the second flush returns only after a writer iteration that
  // began after the first, which re-reads a file older than
  // patterns_reload_ms.
  flush_twice();
}

}  // namespace

// Not instrumented: every request is its own trace.
[[gnu::no_instrument_function]] int main(int argc, char** argv) {
  int requests = argc > 1 ? std::atoi(argv[1]) : 100;
  g_tail = argc > 2 && std::strcmp(argv[argc - 1], "tail") == 0;
  if (g_tail) --argc;
  g_stall = argc > 2 && std::strcmp(argv[argc - 1], "stall") == 0;
  if (g_stall) --argc;
  const char* out = std::getenv("SONDE_OUT");
  bool wait = out != nullptr && argc <= 2;
  const bool phases = argc > 2 && std::strcmp(argv[2], "phases") == 0;
  if ((argc > 2 && std::strcmp(argv[2], "wait") == 0) || phases) wait = out != nullptr;
  volatile unsigned sink = 0;
  int warmup = 0;
  if (wait) {
    double deadline = seconds_now() + 20;
    while (!report_exists(out) && seconds_now() < deadline) {
      sink = sink + request(static_cast<unsigned>(warmup), 1000);
      ++warmup;
    }
  }
  if (phases) {
    // At least 4,000 requests (twice the test's cull_phase_calls), however
    // slowly a busy machine runs them; then the writer catches up, so the
    // window that culls nothing has ended (and the pause begun) before any
    // new code runs: a CI run under load (2026-12-06) drained this phase
    // and other_request's first calls in one turn, so other_helper was
    // culled by that window, with no pause to end.
    const double until = seconds_now() + 0.4;
    for (int n = 0; n < 4000 || seconds_now() < until; ++n, ++warmup)
      sink = sink + request(static_cast<unsigned>(warmup), 1000);
    flush_twice();
  }
  const bool settle = argc > 2 && std::strcmp(argv[2], "settle") == 0;
  const char* repattern = argc > 3 && std::strcmp(argv[2], "repattern") == 0 ? argv[3] : nullptr;
  unsigned result = 0;
  for (int i = 0; i < requests; ++i) {
    if (repattern != nullptr && i == requests / 2) {
      // Past the exit sites' grace period (100 ms after the filter changed),
      // so that exit hook calls are patched before they are restored.
      timespec grace{0, 150000000};
      nanosleep(&grace, nullptr);
      rewrite_patterns(repattern, "+helper*\n");
    }
    // `phases` too: by then the new code's first window is full, and the
    // writer catches up and culls before the rest run (a fresh clone's
    // ctest under load, 2026-12-07, saw 523,317 of other_helper's 2,000,000
    // calls recorded while the writer lagged).
    if ((settle || phases) && i == requests / 10) flush_twice();
    result = result * 31 + (phases ? other_request(static_cast<unsigned>(i))
                                   : request(static_cast<unsigned>(i), 1000));
  }
  std::fprintf(stderr, "warmup=%d requests=%d result=%u\n", warmup, requests, result);
  return 0;
}
