/* Demonstrates using an installed sonde from plain C: built once through
 * find_package(sonde) and once through `pkg-config --cflags --libs sonde`.
 * Records 10 calls of the operation "consumer_work". */
#include <sonde/sonde.h>
#include <stdio.h>

static int consumer_work(int i) {
  static sonde_op op = SONDE_OP_INIT("consumer_work");
  sonde_begin(&op);
  int square = i * i;
  sonde_end(&op);
  return square;
}

int main(void) {
  /* libsonde starts monitoring when it is loaded, before main. */
  if (!sonde_is_enabled()) {
    fprintf(stderr, "consumer: monitoring is not enabled\n");
    return 2;
  }
  int sum = 0;
  for (int i = 0; i < 10; ++i) sum += consumer_work(i);
  printf("consumer: sum %d\n", sum);
  return 0;
}
