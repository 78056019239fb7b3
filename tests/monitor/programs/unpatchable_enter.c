/* A pattern switch that monitors again a function whose enter hook call
 * could not be patched out while it was excluded (unpatchable_enter.S):
 * its enter records as soon as the new filter allows it, so its exit hook
 * call must be back before the filter is published. A second thread calls
 * it in a tight loop through outer() across the switch from "-*" to "+*".
 * The program reads its own code to say what happened (on stderr):
 *   enter hook call kept: yes|no     (it is a call when excluded: unpatchable)
 *   exit hook call patched: yes|no   (a NOP while excluded)
 *   exit hook call back when the patterns returned: yes|no
 * Usage: test_unpatchable_enter [MS_MONITORED]  (prints the calls) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sonde/sonde.h"

void unpatchable_enter(void);
extern const unsigned char unpatchable_enter_enter_call[];
extern const unsigned char unpatchable_enter_exit_call[];

static int g_stop;            /* read and written with __atomic builtins */
static volatile long g_calls; /* the caller's only; read after the join */

__attribute__((noinline)) static void outer(void) {
  unpatchable_enter();
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

/* The first byte of a hook call: 0xe8 while it is a call. */
__attribute__((no_instrument_function)) static int is_call(const unsigned char* site) {
  return __atomic_load_n(site, __ATOMIC_ACQUIRE) == 0xe8;
}

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  int monitored_ms = argc > 1 ? atoi(argv[1]) : 200;
  char error[256];
  if (sonde_set_patterns("-*", error, sizeof error) != 0) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, caller, NULL);
  /* The writer patches the excluded hook calls (exits after a grace period). */
  for (int waited = 0; waited < 10000 && is_call(unpatchable_enter_exit_call); waited += 10)
    sleep_ms(10);
  fprintf(stderr, "enter hook call kept: %s\n",
          is_call(unpatchable_enter_enter_call) ? "yes" : "no");
  fprintf(stderr, "exit hook call patched: %s\n",
          is_call(unpatchable_enter_exit_call) ? "no" : "yes");
  if (sonde_set_patterns("+*", error, sizeof error) != 0) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  fprintf(stderr, "exit hook call back when the patterns returned: %s\n",
          is_call(unpatchable_enter_exit_call) ? "yes" : "no");
  sleep_ms(monitored_ms);
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  pthread_join(thread, NULL);
  printf("%ld\n", (long)g_calls);
  return 0;
}
