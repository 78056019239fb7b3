/* A pattern switch that monitors again two functions whose enter hook calls
 * start on the last byte of a 16-byte block (unpatchable_enter.S): one
 * indirect call, which cannot be patched out (its enter records as soon as
 * the new filter allows it, so its exit hook call must be back before the
 * filter is published), and one direct call, which is sent to a `ret`
 * while excluded. A second thread calls both in a tight loop through
 * outer() across the switch from "-*" to "+*". The program reads its own
 * code to say what happened (on stderr):
 *   enter hook call kept: yes|no          (indirect: unchanged while excluded)
 *   exit hook call patched: yes|no        (a NOP while excluded)
 *   direct enter call sent to a ret: yes|no
 *   exit hook call back when the patterns returned: yes|no
 *   direct enter call back: yes|no        (its original bytes, soon after)
 * Usage: test_unpatchable_enter [MS_MONITORED]  (prints the calls) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/sonde.h"

void unpatchable_enter(void);
void redirected_enter(void);
extern const unsigned char unpatchable_enter_enter_call[];
extern const unsigned char unpatchable_enter_exit_call[];
extern const unsigned char redirected_enter_enter_call[];
extern const unsigned char redirected_enter_exit_call[];

static int g_stop;            /* read and written with __atomic builtins */
static volatile long g_calls; /* the caller's only; read after the join */

__attribute__((noinline)) static void outer(void) {
  unpatchable_enter();
  redirected_enter();
  g_calls = g_calls + 1; /* no tail call: outer's exit hook runs here */
}

__attribute__((no_instrument_function)) static void* caller(void* arg) {
  (void)arg;
  while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) outer();
  return NULL;
}

__attribute__((no_instrument_function)) static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The 6 bytes at `site`, read with one atomic load per byte. */
__attribute__((no_instrument_function)) static void read_code(const unsigned char* site,
                                                              unsigned char out[6]) {
  for (int i = 0; i < 6; ++i) out[i] = __atomic_load_n(site + i, __ATOMIC_ACQUIRE);
}

/* The first byte of a hook call: 0xe8 while it is a call. */
__attribute__((no_instrument_function)) static int is_call(const unsigned char* site) {
  return __atomic_load_n(site, __ATOMIC_ACQUIRE) == 0xe8;
}

/* A direct call at `site` whose target holds a `ret`. The target is a page
 * libsonde wrote before it stored the call's new target, through code
 * stores ThreadSanitizer does not see: not checked by it. */
__attribute__((no_instrument_function, no_sanitize("thread"))) static int calls_a_ret(
    const unsigned char* site) {
  unsigned char code[6];
  read_code(site, code);
  if (code[0] != 0xe8) return 0;
  int32_t rel;
  memcpy(&rel, code + 1, sizeof rel);
  const unsigned char* target = site + 5 + rel;
  return __atomic_load_n(target, __ATOMIC_ACQUIRE) == 0xc3;
}

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  int monitored_ms = argc > 1 ? atoi(argv[1]) : 200;
  unsigned char indirect[6], direct[6], now[6];
  read_code(unpatchable_enter_enter_call, indirect);
  read_code(redirected_enter_enter_call, direct);
  char error[256];
  if (sonde_set_patterns("-*", error, sizeof error) != 0) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, caller, NULL);
  /* The writer patches the excluded hook calls (exits after a grace period). */
  for (int waited = 0; waited < 10000 && (is_call(unpatchable_enter_exit_call) ||
                                          is_call(redirected_enter_exit_call) ||
                                          !calls_a_ret(redirected_enter_enter_call));
       waited += 10)
    sleep_ms(10);
  read_code(unpatchable_enter_enter_call, now);
  fprintf(stderr, "enter hook call kept: %s\n", memcmp(now, indirect, 6) == 0 ? "yes" : "no");
  fprintf(stderr, "exit hook call patched: %s\n",
          is_call(unpatchable_enter_exit_call) ? "no" : "yes");
  fprintf(stderr, "direct enter call sent to a ret: %s\n",
          calls_a_ret(redirected_enter_enter_call) ? "yes" : "no");
  if (sonde_set_patterns("+*", error, sizeof error) != 0) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  fprintf(
      stderr, "exit hook call back when the patterns returned: %s\n",
      is_call(unpatchable_enter_exit_call) && is_call(redirected_enter_exit_call) ? "yes" : "no");
  /* Enter calls come back after the filter, in the writer's next pass. */
  int back = 0;
  for (int waited = 0; waited < 10000 && !back; waited += 10) {
    read_code(redirected_enter_enter_call, now);
    back = memcmp(now, direct, 5) == 0;
    if (!back) sleep_ms(10);
  }
  fprintf(stderr, "direct enter call back: %s\n", back ? "yes" : "no");
  sleep_ms(monitored_ms);
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  pthread_join(thread, NULL);
  printf("%ld\n", (long)g_calls);
  return 0;
}
