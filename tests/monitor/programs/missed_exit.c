/* A frame whose exit is never seen, at the bottom of a trace: as when a
 * pattern switch brings a function's enter call back before its exit's
 * (seen in a real run: every later request of that thread joined one
 * trace). handler() is entered while monitoring is off, so its enter is
 * not recorded; inside it monitoring is switched on and an operation is
 * begun and never ended (the frame whose exit is missed). handler's exit
 * then comes without its enter, which proves that the operation's frame
 * returned. ROUNDS requests follow, each a trace of its own.
 * Usage: test_missed_exit ROUNDS    (prints the checksum) */
#include <stdio.h>
#include <stdlib.h>

#include "sonde/sonde.h"

static volatile long g_sink;

__attribute__((noinline)) static void work(int i) { g_sink += i; }

__attribute__((noinline)) static void request(int i) {
  work(i);
  g_sink += 1;
}

__attribute__((noinline)) static void handler(void) {
  static sonde_op stuck = SONDE_OP_INIT("missed.stuck");
  sonde_set_enabled(1);
  sonde_begin(&stuck); /* never ended */
  work(-1);
  g_sink += 2; /* no tail call: handler's own exit hook runs here */
}

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  sonde_set_enabled(0);
  handler();
  for (int i = 0; i < rounds; ++i) request(i);
  printf("%ld\n", (long)g_sink);
  return 0;
}
