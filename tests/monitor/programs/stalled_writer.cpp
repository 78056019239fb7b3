// Runs manual probes fast on one thread with few small buffers while the
// writer thread is stalled (SONDE_TEST_WRITER_STALL_MS: the writer sleeps
// that long before its first write, as a hung disk or NFS mount would make
// it). With the block policy the first probe that finds no buffer waits
// block_timeout_ms; after that, events are dropped and counted without
// waiting until the writer catches up.
// Usage: test_stalled_writer CALLS    (prints the calls made)
#include <cstdio>
#include <cstdlib>

#include "sonde/sonde.h"

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 100000;
  static sonde_op op = SONDE_OP_INIT("stalled.call");
  for (long i = 0; i < calls; ++i) {
    sonde_begin(&op);
    sonde_end(&op);
  }
  std::printf("%ld\n", calls);
  return 0;
}
