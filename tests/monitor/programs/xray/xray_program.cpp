// Built with clang++ -fxray-instrument -fxray-instruction-threshold=1 and
// without sonde: every function here has XRay sleds, which stay unpatched
// (free) unless libsonde, preloaded, patches them at run time.
//
//   test_xray ITERATIONS                    static function, method, recursion, tail call
//   test_xray ITERATIONS throw              plus an exception through two frames each time
//   test_xray ITERATIONS repattern FILE P   runs, rewrites FILE with patterns P (';' lines),
//                                           waits for libsonde to re-read it, runs again
//   test_xray ITERATIONS inside FILE P      the same, but rewrites FILE from inside
//                                           long_running(), which P may exclude
// Only C library calls besides our own functions: library templates would get
// sleds too and add operations the tests do not expect.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace geometry {
struct Square {
  [[gnu::noinline]] int area(int side) const { return side * side; }
};
}  // namespace geometry

[[gnu::noinline]] static int twice(int x) { return x * 2; }

volatile int g_depth_seen = 0;

// The store after the call keeps the optimiser from turning the recursion
// into a loop: countdown(2) must stay three calls.
[[gnu::noinline]] int countdown(int n) {
  if (n == 0) return 0;
  int r = countdown(n - 1) + 1;
  g_depth_seen = r;
  return r;
}

[[gnu::noinline]] int plus_one(int x) { return x + 1; }

// A sibling call at -O2: leaves through XRay's tail-exit sled, then plus_one runs.
[[gnu::noinline]] int forward(int x) { return plus_one(x * 3); }

struct Oops {
  int code;
};

[[gnu::noinline]] void thrower(int i) {
  if (i >= 0) throw Oops{i};
}

[[gnu::noinline]] int risky(int i) {
  thrower(i);
  return i;
}

// XRay has no sled for a frame left by unwinding: risky and thrower never
// report an exit. guarded's own exit closes them.
[[gnu::noinline]] int guarded(int i) {
  try {
    return risky(i);
  } catch (const Oops& e) {
    return e.code;
  }
}

static int run(int iterations, bool with_throw) {
  volatile int sink = 0;
  geometry::Square sq;
  for (int i = 0; i < iterations; ++i) {
    sink = sink + twice(i) + sq.area(i) + countdown(2) + forward(i);
    if (with_throw) sink = sink + guarded(i);
  }
  return sink;
}

// Written aside and renamed, so libsonde never reads a half-written file.
static int rewrite_patterns(const char* path, const char* patterns) {
  char temp[4096];
  if (snprintf(temp, sizeof temp, "%s.new", path) >= static_cast<int>(sizeof temp)) return 1;
  FILE* f = fopen(temp, "w");
  if (f == nullptr) return 1;
  for (const char* p = patterns; *p != '\0'; ++p) fputc(*p == ';' ? '\n' : *p, f);
  fputc('\n', f);
  if (fclose(f) != 0) return 1;
  return rename(temp, path) == 0 ? 0 : 1;
}

// libsonde's writer thread re-reads the file every patterns_reload_ms (10
// in the tests) and compares its text. A fixed wait was not enough: in
// CI's ASan pass the writer was still resolving the first buffer's names
// 800 ms later. So: wait past the reload interval, then flush twice (found
// with dlsym: this program does not link libsonde). The first flush is
// served by a writer iteration that re-reads the file after it; the
// second returns only once that iteration has ended.
static int repattern(const char* path, const char* patterns) {
  usleep(100 * 1000);
  if (rewrite_patterns(path, patterns) != 0) return 1;
  usleep(50 * 1000);
  int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "sonde_flush");
  if (flush == NULL || flush() != 0 || flush() != 0) return 1;
  return 0;
}

// When P excludes this function, it is unpatched while it runs: its exit
// sled no longer fires.
[[gnu::noinline]] int long_running(const char* path, const char* patterns) {
  if (repattern(path, patterns) != 0) return -1;
  return twice(1);
}

int main(int argc, char** argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 10;
  const char* mode = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "repattern") == 0 && argc > 4) {
    run(iterations, false);
    if (repattern(argv[3], argv[4]) != 0) return 2;
    run(iterations, false);
    return 0;
  }
  if (strcmp(mode, "inside") == 0 && argc > 4) {
    run(iterations, false);
    if (long_running(argv[3], argv[4]) < 0) return 2;
    run(iterations, false);
    return 0;
  }
  run(iterations, strcmp(mode, "throw") == 0);
  return 0;
}
