// Trace context propagation: capture a position in the current trace and
// continue it on another thread, or carry it in a W3C traceparent header.
#include <cstdio>
#include <cstring>

#include "monitor/thread_state.hpp"
#include "sonde/sonde.h"

using namespace sonde::monitor;

extern "C" {

SONDE_API sonde_context sonde_context_capture(void) {
  sonde_context ctx{};
  ThreadState& t = t_state;
  if (t.status == kThreadActive && t.depth > 0) {
    ctx.trace_id = t.trace_id - 1;  // begin_trace post-increments
    ctx.order_index = static_cast<int32_t>(t.order) - 1;
    ctx.flags = 1;
  }
  return ctx;
}

SONDE_API void sonde_context_continue(const sonde_context* ctx) {
  if (ctx == nullptr || (ctx->flags & 1u) == 0) return;
  ThreadState& t = t_state;
  t.has_parent = 1;
  t.parent_trace_id = ctx->trace_id;
  t.parent_order_id = ctx->order_index;
}

// traceparent = version "-" trace-id (32 hex) "-" parent-id (16 hex) "-" flags.
// sonde's 64-bit trace id fills the low half of the trace-id; the parent-id
// is the order index + 1 (W3C forbids an all-zero parent-id).
SONDE_API int sonde_context_inject(const sonde_context* ctx, char* out, size_t out_size) {
  if (ctx == nullptr || (ctx->flags & 1u) == 0 || out == nullptr || out_size < 56) return -1;
  std::snprintf(out, out_size, "00-%016llx%016llx-%016llx-01", 0ULL,
                static_cast<unsigned long long>(ctx->trace_id),
                static_cast<unsigned long long>(static_cast<int64_t>(ctx->order_index) + 1));
  return 0;
}

static bool parse_hex(const char* s, size_t n, unsigned long long* out) {
  unsigned long long v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = (v << 4) | static_cast<unsigned>(d);
  }
  *out = v;
  return true;
}

SONDE_API int sonde_context_extract(const char* tp, sonde_context* ctx) {
  if (tp == nullptr || ctx == nullptr || std::strlen(tp) < 55) return -1;
  if (tp[2] != '-' || tp[35] != '-' || tp[52] != '-') return -1;
  unsigned long long version, high, low, parent, flags;
  if (!parse_hex(tp, 2, &version) || version == 0xff || !parse_hex(tp + 3, 16, &high) ||
      !parse_hex(tp + 19, 16, &low) || !parse_hex(tp + 36, 16, &parent) ||
      !parse_hex(tp + 53, 2, &flags)) {
    return -1;
  }
  if ((high | low) == 0 || parent == 0) return -1;  // invalid per W3C
  if (version == 0 && tp[55] != '\0') return -1;
  // A trace id from another tracer (high half set) is folded into 64 bits.
  ctx->trace_id = low ^ high;
  // A foreign parent-id is not an order index; keep the trace, drop the position.
  ctx->order_index = parent <= 0x7fffffffULL ? static_cast<int32_t>(parent - 1) : -1;
  ctx->flags = 1;
  return 0;
}

}  // extern "C"
