/* Demonstrates the C API: a static sonde_op per probe site, sonde_begin
 * paired with sonde_end, or with sonde_failed (and a cause) on the error
 * path.
 *
 *   example_c_probes [records=100]
 *
 * Call counts: process_batch 1, parse_record N, checksum N - N/7; parse_record
 * fails for every 7th record (cause "malformed record"). */
#include <sonde/sonde.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned checksum(unsigned value) {
  static sonde_op op = SONDE_OP_INIT("checksum");
  sonde_begin(&op);
  unsigned sum = 0;
  for (int i = 0; i < 32; ++i) sum = sum * 33u + ((value >> (i % 32)) & 1u);
  sonde_end(&op);
  return sum;
}

/* Returns 0 and stores the parsed value, or -1 for a malformed record. */
static int parse_record(int index, unsigned* value) {
  static sonde_op op = SONDE_OP_INIT("parse_record");
  sonde_begin(&op);
  if (index % 7 == 6) {
    sonde_failed(&op, "malformed record");
    return -1;
  }
  *value = checksum((unsigned)index * 2654435761u);
  sonde_end(&op);
  return 0;
}

static unsigned process_batch(int records, int* failures) {
  static sonde_op op = SONDE_OP_INIT("process_batch");
  sonde_begin(&op);
  unsigned total = 0;
  for (int i = 0; i < records; ++i) {
    unsigned value = 0;
    if (parse_record(i, &value) != 0) {
      ++*failures;
    } else {
      total ^= value;
    }
  }
  sonde_end(&op);
  return total;
}

int main(int argc, char** argv) {
  int records = argc > 1 ? atoi(argv[1]) : 100;
  if (records < 0) records = 0;
  int failures = 0;
  unsigned total = process_batch(records, &failures);
  printf("c_probes: %d records, %d malformed, checksum %u\n", records, failures, total);
  return 0;
}
