// Records a program reports itself (include/sonde/records.h), with known
// counts and values:  test_probe_records SENDS CALLS
// SENDS message sends inside the operation "shop.publish", to "queue-<i % 3>",
// of 100 + i bytes taking 1000 + i ns; one more send outside any operation
// to "orphan" (no trace: traceId -1); CALLS database calls "SELECT <i>"
// taking 500 ns inside "shop.query".
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sonde/records.h"
#include "sonde/sonde.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test_probe_records SENDS CALLS\n");
    return 2;
  }
  int sends = std::atoi(argv[1]);
  int calls = std::atoi(argv[2]);
  for (int i = 0; i < sends; ++i) {
    SONDE_SCOPE_NAMED("shop.publish");
    std::string queue = "queue-" + std::to_string(i % 3);
    sonde_record_message_send(queue.c_str(), 100 + i, 1000 + i);
  }
  sonde_record_message_send("orphan", 1, -1);
  for (int i = 0; i < calls; ++i) {
    SONDE_SCOPE_NAMED("shop.query");
    std::string sql = "SELECT " + std::to_string(i);
    sonde_record_database_call(sql.c_str(), 500);
  }
  return 0;
}
