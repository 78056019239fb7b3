// The probe hot path: what every monitored enter and exit costs. No locks,
// syscalls, allocation or strings; one bounds check, one timestamp, one
// 16-byte store and the shadow-stack update. Everything rare is out of line.
#pragma once

#include "monitor/clock.hpp"
#include "monitor/thread_state.hpp"

namespace sonde::monitor {

[[gnu::always_inline]] inline void probe_enter(RawKind kind, uint64_t id, uint64_t key) {
  ThreadState& t = t_state;
  if (t.status != kThreadActive) [[unlikely]] {
    if (!activate_thread(t)) return;
  }
  if (t.depth == t.shadow_capacity) [[unlikely]] {
    if (!grow_shadow(t)) return;
  }
  RawEvent* p = t.cur.load(std::memory_order_relaxed);
  if (p >= t.limit) [[unlikely]] {
    p = next_buffer(t);
    if (p == nullptr) {
      t.shadow[t.depth++] = key | kDroppedTag;
      ++t.pending_lost;
      return;
    }
  }
  uint64_t now = now_raw();
  if (t.pending_lost != 0) [[unlikely]]
    p = mark_lost(t, p, now);
  if (t.depth == 0) p = begin_trace(t, p);
  p->a = now;
  p->b = pack(kind, id);
  t.cur.store(p + 1, std::memory_order_release);
  t.shadow[t.depth++] = key;
  ++t.order;
}

// Records the exit of the innermost open frame if it is `key`; a mismatch
// (an exit without its enter, e.g. after the mode changed) is ignored, which
// keeps every recorded trace balanced.
[[gnu::always_inline]] inline void probe_exit(RawKind kind, uint64_t id, uint64_t key,
                                              uint64_t cause = 0) {
  ThreadState& t = t_state;
  if (t.depth == 0) return;
  uint64_t top = t.shadow[t.depth - 1];
  if ((top & ~kDroppedTag) != key) return;
  --t.depth;
  if (top & kDroppedTag) [[unlikely]] {
    ++t.pending_lost;
    return;
  }
  // An exit may use the slack but for one slot: it writes at most a lost
  // marker, the exit and (failed exits) the cause.
  RawEvent* p = t.cur.load(std::memory_order_relaxed);
  if (p >= t.limit + kBufferSlack - 3) [[unlikely]] {
    p = next_buffer(t);
    if (p == nullptr) {
      ++t.pending_lost;
      return;
    }
  }
  uint64_t now = now_raw();
  if (t.pending_lost != 0) [[unlikely]]
    p = mark_lost(t, p, now);
  p->a = now;
  p->b = pack(kind, id);
  if (kind == RawKind::kFailFn || kind == RawKind::kFailOp) [[unlikely]] {
    ++p;
    p->a = cause;
    p->b = pack(RawKind::kCause, 0);
  }
  t.cur.store(p + 1, std::memory_order_release);
  ++t.order;
}

}  // namespace sonde::monitor
