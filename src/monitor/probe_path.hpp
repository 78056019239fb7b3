// The probe hot path: what every monitored enter and exit costs. No locks,
// syscalls, allocation or strings; one status check, one bounds check, one
// timestamp, one 16-byte store and the shadow-stack update. Everything rare
// (a thread's first probe, the outermost frame of a trace, a full buffer, an
// exit that does not match the top frame, a probe inside a signal handler)
// is out of line.
//
// While a probe runs, the thread's status reads kThreadInProbe: a signal
// handler whose probe interrupts it sees that and only counts its events as
// lost, so the buffer and the shadow stack are never written twice at once,
// and no lock or allocation is reachable from a probe inside a handler that
// interrupted a probe. The signal fences keep the compiler from moving the
// buffer and stack writes outside that window (they emit no instruction).
#pragma once

#include <atomic>

#include "monitor/clock.hpp"
#include "monitor/thread_state.hpp"

namespace sonde::monitor {

// Slow paths (probe_slow.cpp). Each returns with the status back at
// kThreadActive, or leaves it as it found it when it records nothing.
bool enter_slow(ThreadState& t, RawKind kind, uint64_t id, uint64_t key, uint64_t sp);
void exit_slow(ThreadState& t, RawKind kind, uint64_t id, uint64_t key, uint64_t sp, uint64_t cause,
               uint64_t site);
// An exit hook's exit at depth 0 (outside every trace): an excluded
// function's call site is patched out (callsite_patch.hpp).
void exit_outside_trace(uint64_t key, uint64_t site);

// `sp` is the probed function's stack pointer at the probe call
// (__builtin_dwarf_cfa() in the non-inlined entry point); it lets the slow
// paths tell which open frames a longjmp left behind.
[[gnu::always_inline]] inline void probe_enter(RawKind kind, uint64_t id, uint64_t key,
                                               uint64_t sp) {
  ThreadState& t = t_state;
  if (t.status != kThreadActive) [[unlikely]] {  // new, off, in a probe, longjmp noted
    enter_slow(t, kind, id, key, sp);
    return;
  }
  // From here on a signal handler's probe on this thread only counts itself:
  // nothing below may be read before this store (the fence keeps it so).
  t.status = kThreadInProbe;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  RawEvent* p = t.cur.load(std::memory_order_relaxed);
  // The outermost frame of a trace, a full shadow stack or buffer, or a
  // loss to mark: all out of line.
  if (t.depth == 0 || t.depth == t.shadow_capacity || p >= t.limit || t.pending_lost != 0)
      [[unlikely]] {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.status = kThreadActive;
    enter_slow(t, kind, id, key, sp);
    return;
  }
  p->a = now_raw();
  p->b = pack(kind, id);
  t.cur.store(p + 1, std::memory_order_release);
  push_frame(t, key, sp);
  ++t.order;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.status = kThreadActive;
}

// Records the exit of the innermost open frame if it is `key`. Anything else
// (a frame left by longjmp below it, an excluded function, an exit without
// its enter) is sorted out by exit_slow, which keeps every trace balanced.
// `site`: the -finstrument-functions exit hook's return address (0 for
// other probes), so that an excluded function's hook call can be patched
// out; only the slow paths read it.
[[gnu::always_inline]] inline void probe_exit(RawKind kind, uint64_t id, uint64_t key, uint64_t sp,
                                              uint64_t cause = 0, uint64_t site = 0) {
  ThreadState& t = t_state;
  // Nothing open: outside every trace. (A handler that runs between this
  // read and the status store leaves the depth as it found it.)
  if (t.depth == 0) [[unlikely]] {
    if (site != 0) exit_outside_trace(key, site);
    return;
  }
  if (t.status != kThreadActive) [[unlikely]] {
    exit_slow(t, kind, id, key, sp, cause, site);
    return;
  }
  t.status = kThreadInProbe;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // An exit may use the slack but for its last three slots: it writes at
  // most a lost marker, the exit and (failed exits) the cause.
  RawEvent* p = t.cur.load(std::memory_order_relaxed);
  if (t.shadow[t.depth - 1].key != key || p >= t.limit + kBufferSlack - 3 || t.pending_lost != 0 ||
      kind == RawKind::kFailFn || kind == RawKind::kFailOp) [[unlikely]] {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.status = kThreadActive;
    exit_slow(t, kind, id, key, sp, cause, site);
    return;
  }
  pop_frame(t);
  p->a = now_raw();
  p->b = pack(kind, id);
  t.cur.store(p + 1, std::memory_order_release);
  ++t.order;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.status = kThreadActive;
}

}  // namespace sonde::monitor
