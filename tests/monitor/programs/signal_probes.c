// An instrumented SIGALRM handler fires every 20 us (setitimer) while the
// main thread runs instrumented code, so handlers often interrupt a probe.
// Both count their instrumented calls; the program prints the totals, which
// the test compares with the events recorded plus the events counted lost.
// Usage: test_signal_probes ITERATIONS   (prints "<main calls> <handler calls>")
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile unsigned long g_main_calls;
static volatile unsigned long g_handler_calls;
static volatile long g_sink;

__attribute__((noinline)) static void handler_leaf(int i) {
  ++g_handler_calls;
  g_sink += i;
}

__attribute__((noinline)) static void on_tick(int sig) {
  ++g_handler_calls;
  handler_leaf(sig);
  handler_leaf(sig + 1);
}

__attribute__((noinline)) static void work_leaf(int i) {
  ++g_main_calls;
  g_sink += i;
}

__attribute__((noinline)) static void work(int i) {
  ++g_main_calls;
  for (int j = 0; j < 8; ++j) work_leaf(i + j);
}

// Registers the main thread with libsonde before the timer runs: a
// thread's first probe allocates (its channel), which a signal handler must
// not do, and is documented as not covered (docs/real-programs.md).
// ThreadSanitizer reported it when the first SIGALRM beat main's first
// monitored call.
__attribute__((noinline)) static void warm_up(void) { g_sink += 1; }

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 1000000;
  warm_up();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_tick;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval tick = {{0, 20}, {0, 20}};
  setitimer(ITIMER_REAL, &tick, NULL);
  for (long i = 0; i < iterations; ++i) work((int)i);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGALRM);
  sigprocmask(SIG_BLOCK, &set, NULL);  // no handler after the counts are read
  printf("%lu %lu\n", (unsigned long)g_main_calls, (unsigned long)g_handler_calls);
  return 0;
}
