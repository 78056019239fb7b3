// Cost of one timestamp on this machine: back-to-back rdtsc and
// clock_gettime(CLOCK_MONOTONIC). Build: gcc -O2 bench/timer_cost.c -o timer_cost
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
int main() {
  struct timespec a, b;
  unsigned long long s = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 50000000; i++) s += __rdtsc();
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("rdtsc %.2f ns (%llu)\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 5e7,
         s & 1);
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 20000000; i++) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    s += t.tv_nsec;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("clock_gettime %.2f ns\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 2e7);
  return s == 0;
}
