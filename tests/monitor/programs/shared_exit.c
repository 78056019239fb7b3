/* Calls container(0) and container(1) (shared_exit.S) in turn, ROUNDS times
 * each, with inlined_a excluded by the patterns the test sets
 * (SONDE_PATTERNS=-inlined_a*): every call of inlined_b must be recorded
 * whole. Sleeps a little every 10,000 rounds so that the writer patches
 * what it may meanwhile. Usage: test_shared_exit ROUNDS */
#include <stdlib.h>
#include <time.h>

void container(int which);

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 100000;
  for (long i = 0; i < rounds; ++i) {
    container(0);
    container(1);
    if (i % 10000 == 9999) {
      struct timespec t = {0, 2000000};
      nanosleep(&t, NULL);
    }
  }
  return 0;
}
