// Trace context propagation: capture a position in the current trace and
// continue it on another thread, or carry it in a W3C traceparent header.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "format/w3c_ids.hpp"
#include "monitor/thread_state.hpp"
#include "sonde/sonde.h"

using namespace sonde::monitor;

namespace {

// The order index of the enter event of the thread's innermost open frame:
// the events after it in the current buffer are its finished callees
// (matched enter/exit pairs) and markers. Walked back from the cursor on
// the capturing thread itself, at most kMaxWalk events (a capture is on
// the program's path, and an execution may have run millions of callees);
// -1 when that enter is not among them (handed to the writer with an
// earlier buffer, or further back), was dropped, or the thread's order
// indexes no longer match the log's (after a fork).
constexpr size_t kMaxWalk = 8192;

int64_t innermost_enter_order(const ThreadState& t) {
  const Buffer* b = t.buffer;
  if (b == nullptr || t.depth == 0 || t.order_diverged != 0 ||
      (t.shadow[t.depth - 1].key & kDroppedTag) != 0) {
    return -1;
  }
  const RawEvent* cur = t.cur.load(std::memory_order_relaxed);
  if (cur < b->events || cur > b->events + b->capacity) return -1;
  const RawEvent* stop = cur - std::min<size_t>(kMaxWalk, static_cast<size_t>(cur - b->events));
  int64_t order = int64_t{t.order} - 1;  // the last event's
  uint64_t finished = 0;                 // exits seen whose enters are still ahead
  for (const RawEvent* e = cur; e > stop;) {
    --e;
    switch (kind_of(e->b)) {
      case RawKind::kEnterFn:
      case RawKind::kEnterOp:
        if (finished == 0) return order;
        --finished;
        --order;
        break;
      case RawKind::kExitFn:
      case RawKind::kExitOp:
      case RawKind::kFailFn:
      case RawKind::kFailOp:
        ++finished;
        --order;
        break;
      case RawKind::kLost:  // readers advance the order index by its count, as the thread does
        order -= static_cast<int64_t>(payload_of(e->b));
        break;
      case RawKind::kCause:
      case RawKind::kTraceParent:
      case RawKind::kW3c:
        break;
      default:  // the trace's begin (its enter must come after), anything unexpected
        return -1;
    }
  }
  return -1;
}

}  // namespace

extern "C" {

SONDE_API sonde_context sonde_context_capture(void) {
  sonde_context ctx{};
  ThreadState& t = t_state;
  if (t.status == kThreadActive && t.depth > 0) {
    ctx.trace_id = t.trace_id - 1;  // begin_trace post-increments
    ctx.order_index = static_cast<int32_t>(t.order) - 1;
    ctx.flags = 1;
    if ((t.w3c_high | t.w3c_low) != 0) {
      ctx.flags |= 2;
      ctx.w3c_trace_id_high = t.w3c_high;
      ctx.w3c_trace_id_low = t.w3c_low;
    }
    // As a probe, for the walk: a signal handler's probe meanwhile only
    // counts itself instead of handing this buffer to the writer.
    t.status = kThreadInProbe;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const int64_t enter = innermost_enter_order(t);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.status = kThreadActive;
    if (enter >= 0) {
      ctx.span_id =
          sonde::format::w3c::span_id(t.continued == 0, ctx.trace_id, static_cast<uint32_t>(enter));
    }
  }
  return ctx;
}

SONDE_API void sonde_context_continue(const sonde_context* ctx) {
  if (ctx == nullptr || (ctx->flags & 1u) == 0) return;
  ThreadState& t = t_state;
  t.has_parent = 1;
  t.parent_trace_id = ctx->trace_id;
  t.parent_order_id = ctx->order_index;
  t.parent_is_w3c = (ctx->flags & 2u) != 0 ? 1 : 0;
  t.parent_w3c_high = ctx->w3c_trace_id_high;
  t.parent_w3c_low = ctx->w3c_trace_id_low;
  // The caller's span: a foreign caller's, or the sonde execution's that
  // captured a context of a W3C trace sonde did not start (what an export
  // of this part alone, e.g. a snapshot, hangs it from).
  t.parent_span_id = (ctx->flags & 2u) != 0 ? ctx->span_id : 0;
}

// traceparent = version "-" trace-id (32 hex) "-" parent-id (16 hex) "-" flags.
// The trace-id: a W3C trace sonde did not start keeps its id; sonde's own
// trace writes its 64-bit trace id in the low half. The parent-id: the span
// id sonde exports for the execution that ran at the capture
// (format/w3c_ids.hpp); if that is unknown (its enter left the buffer), the
// order index + 1, as before 2026-12-03.
SONDE_API int sonde_context_inject(const sonde_context* ctx, char* out, size_t out_size) {
  if (ctx == nullptr || (ctx->flags & 1u) == 0 || out == nullptr || out_size < 56) return -1;
  const bool foreign = (ctx->flags & 2u) != 0;
  const unsigned long long high = foreign ? ctx->w3c_trace_id_high : 0;
  const unsigned long long low = foreign ? ctx->w3c_trace_id_low : ctx->trace_id;
  const unsigned long long parent =
      ctx->span_id != 0
          ? ctx->span_id
          : static_cast<unsigned long long>(static_cast<int64_t>(ctx->order_index) + 1);
  if ((high | low) == 0 || parent == 0) return -1;  // W3C forbids all-zero ids
  std::snprintf(out, out_size, "00-%016llx%016llx-%016llx-01", high, low, parent);
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
  *ctx = sonde_context{};
  ctx->trace_id = low;
  ctx->flags = 1;
  ctx->span_id = parent;
  if (sonde::format::w3c::is_sonde_form(high, parent)) {
    // sonde's own trace: the parent-id is the caller's enter order index + 1.
    ctx->order_index = static_cast<int32_t>(parent - 1);
  } else {
    // A trace sonde did not start (or a continued sonde part's span): kept
    // whole; the caller's span id is not a position in a sonde trace.
    ctx->order_index = -1;
    ctx->flags |= 2;
    ctx->w3c_trace_id_high = high;
    ctx->w3c_trace_id_low = low;
  }
  return 0;
}

}  // extern "C"
