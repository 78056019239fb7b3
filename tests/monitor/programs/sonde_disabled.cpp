// Built with -DSONDE_ENABLE=0 and NOT linked with libsonde (preload.cmake):
// that it links at all shows that every probe compiled to nothing. Uses
// every macro and function of sonde.hpp, sonde.h and records.h, checks the
// answers the no-op API gives, and that no libsonde is mapped. Run with
// SONDE_OUT set: the test checks that nothing was written there.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sonde/records.h"
#include "sonde/sonde.hpp"

#if SONDE_ENABLE
#error "this program must be compiled with -DSONDE_ENABLE=0"
#endif

namespace {

int g_failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++g_failures;
  }
}

int leaf(int n) {
  SONDE_SCOPE();
  return n + 1;
}

int named(const char* operation, int n) {
  SONDE_SCOPE_NAMED(operation);  // a variable name: must not be reported unused
  SONDE_SCOPE_NAMED("disabled.inner");
  return leaf(n) * 2;
}

void failing() {
  SONDE_SCOPE();
  throw std::runtime_error("not recorded");
}

}  // namespace

int main() {
  check(named("disabled.outer", 1) == 4, "scopes change nothing");
  try {
    failing();
  } catch (const std::runtime_error&) {
  }

  static sonde_op op = SONDE_OP_INIT("disabled.c_api");
  sonde_begin(&op);
  sonde_end(&op);
  sonde_begin(&op);
  sonde_failed(&op, "why");
  check(op.id == 0 && op.state == 0, "the operation is never registered");
  { sonde::Scope scope(&op); }

  check(sonde_is_enabled() == 0, "sonde_is_enabled() == 0");
  sonde_set_enabled(1);
  check(sonde_is_enabled() == 0, "still off after sonde_set_enabled(1)");
  char error[64] = "untouched";
  check(sonde_set_patterns("+*", error, sizeof error) == 0, "patterns accepted");
  check(std::strcmp(error, "untouched") == 0, "no pattern error");
  check(sonde_flush() == -1, "nothing to flush");

  sonde_context ctx = sonde_context_capture();
  check(ctx.flags == 0, "captured context is invalid");
  sonde_context_continue(&ctx);
  char header[64];
  check(sonde_context_inject(&ctx, header, sizeof header) == -1, "nothing to inject");
  check(
      sonde_context_extract("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", &ctx) == -1,
      "nothing extracted");
  sonde::Context cpp_ctx = sonde::Context::capture();
  check(!cpp_ctx.valid(), "sonde::Context is invalid");
  cpp_ctx.continue_here();

  sonde_record_message_send("orders", 10, 100);
  sonde_record_database_call("SELECT 1", 100);
  check(sonde_probe_enabled("lock_wait") == 0, "no probe is on");

  sonde_stats stats = sonde_get_stats();
  check(stats.events_recorded == 0 && stats.events_written == 0, "no events");
  sonde_shutdown();

  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  check(text.str().find("libsonde") == std::string::npos, "no libsonde mapped");

  if (g_failures == 0) std::fprintf(stderr, "disabled ok\n");
  return g_failures == 0 ? 0 : 1;
}
