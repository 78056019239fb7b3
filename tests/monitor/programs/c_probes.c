/* Test program for the C API: N iterations of outer → inner, every third
 * inner fails with a cause. */
#include <stdio.h>
#include <stdlib.h>

#include "sonde/sonde.h"

static int inner(int i) {
  static sonde_op op = SONDE_OP_INIT("c.inner");
  sonde_begin(&op);
  if (i % 3 == 0) {
    sonde_failed(&op, "divisible by three");
    return -1;
  }
  sonde_end(&op);
  return i;
}

int main(int argc, char** argv) {
  static sonde_op outer = SONDE_OP_INIT("c.outer");
  int n = argc > 1 ? atoi(argv[1]) : 10;
  long sum = 0;
  for (int i = 0; i < n; ++i) {
    sonde_begin(&outer);
    sum += inner(i);
    sonde_end(&outer);
  }
  printf("%ld\n", sum);
  return 0;
}
