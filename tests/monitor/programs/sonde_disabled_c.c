/* The C API built with -DSONDE_ENABLE=0 and without libsonde (preload.cmake):
 * the static inline no-ops of sonde.h and records.h compile as C too. */
#include <stdio.h>

#include "sonde/records.h"
#include "sonde/sonde.h"

#if SONDE_ENABLE
#error "this program must be compiled with -DSONDE_ENABLE=0"
#endif

static sonde_op checkout = SONDE_OP_INIT("disabled.checkout");

int main(void) {
  sonde_context ctx;
  char header[64];
  sonde_begin(&checkout);
  sonde_failed(&checkout, "out of stock");
  sonde_begin(&checkout);
  sonde_end(&checkout);
  sonde_set_enabled(1);
  ctx = sonde_context_capture();
  sonde_context_continue(&ctx);
  sonde_record_message_send("orders", 1, -1);
  sonde_record_database_call("SELECT 1", -1);
  if (sonde_is_enabled() != 0 || ctx.flags != 0 || checkout.id != 0 ||
      sonde_context_inject(&ctx, header, sizeof header) != -1 ||
      sonde_set_patterns("-*", NULL, 0) != 0 || sonde_flush() != -1 ||
      sonde_probe_enabled("database") != 0 || sonde_get_stats().events_recorded != 0) {
    fprintf(stderr, "FAILED: the disabled C API answered differently\n");
    return 1;
  }
  sonde_shutdown();
  fprintf(stderr, "disabled ok\n");
  return 0;
}
