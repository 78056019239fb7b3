// Leaves instrumented frames with longjmp and siglongjmp, as PostgreSQL's
// ereport and Lua's error handling do. Each round is two traces:
//   request:     request -> middle -> thrower, longjmp back to request, after_jump
//   sig_request: sig_request -> sig_thrower x4 (recursion), siglongjmp back, after_jump
// main is not instrumented, so every request is a trace of its own.
// Usage: test_longjmp_jumps ROUNDS    (prints the checksum)
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf g_env;
static sigjmp_buf g_sigenv;
static volatile long g_sink;

__attribute__((noinline)) static void thrower(int i) {
  g_sink += i;
  longjmp(g_env, 1);
}

__attribute__((noinline)) static void middle(int i) {
  g_sink += i;
  thrower(i);
  g_sink += 1000000;  // never reached
}

__attribute__((noinline)) static void after_jump(int i) { g_sink += i; }

__attribute__((noinline)) static void request(int i) {
  if (setjmp(g_env) == 0) middle(i);
  after_jump(i);
}

__attribute__((noinline)) static void sig_thrower(int depth) {
  if (depth == 0) siglongjmp(g_sigenv, 1);
  sig_thrower(depth - 1);
  g_sink += 1000000;  // never reached
}

__attribute__((noinline)) static void sig_request(int i) {
  if (sigsetjmp(g_sigenv, 1) == 0) sig_thrower(3);
  after_jump(i);
}

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  for (int i = 0; i < rounds; ++i) {
    request(i);
    sig_request(i);
  }
  printf("%ld\n", (long)g_sink);
  return 0;
}
