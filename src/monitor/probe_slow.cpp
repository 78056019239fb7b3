// The probes' slow paths: a thread's first probe, the outermost frame of a
// trace (trace_start), full buffers and shadow stacks, exits that do not
// match the top frame (longjmp, excluded functions), and probes inside a
// signal handler that interrupted a probe. probe_path.hpp sends everything
// rare here; each function runs with the thread's status at kThreadInProbe
// and puts it back before it returns.
#include <algorithm>
#include <atomic>
#include <string>
#include <unordered_set>
#include <vector>

#include "monitor/callsite_patch.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/patterns.hpp"
#include "monitor/probe_path.hpp"
#include "monitor/symbol_table.hpp"
#include "monitor/symbolizer.hpp"

namespace sonde::monitor {
namespace {

uint32_t g_unwound_cause = 0;

// trace_start: sorted addresses of the functions whose outermost calls
// start traces; null when every outermost call does. Built once at start-up
// and never freed (probes read it without a lock).
const std::vector<uint64_t>* g_trace_starts = nullptr;

class ProbeWindow {
 public:
  explicit ProbeWindow(ThreadState& t) : t_(t) {
    t_.status = kThreadInProbe;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~ProbeWindow() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_.status = after_;
  }
  void leave_as(uint8_t status) { after_ = status; }

 private:
  ThreadState& t_;
  uint8_t after_ = kThreadActive;
};

// Events a handler counted while this thread was inside a probe: marked in
// the stream at the next slow path.
void take_signal_losses(ThreadState& t) {
  if (__atomic_load_n(&t.signal_lost, __ATOMIC_RELAXED) != 0) {
    t.pending_lost += __atomic_exchange_n(&t.signal_lost, 0, __ATOMIC_RELAXED);
  }
}

// A write position with room for `n` events, or null (no buffer: dropped).
RawEvent* room_for(ThreadState& t, RawEvent* p, size_t n) {
  if (p != nullptr && p + n <= t.limit + kBufferSlack) return p;
  if (p != nullptr) t.cur.store(p, std::memory_order_release);
  return next_buffer(t);
}

bool on_this_stack(const ThreadState& t, uint64_t sp) {
  return sp != 0 && sp >= t.stack_lo && sp < t.stack_hi;
}

// Closes the top frame as left without an exit: a failed exit whose cause
// says so, so the trace stays balanced and the reader sees what happened.
// Every timestamp is taken after the wait for a buffer: the writer may
// write a new clock calibration meanwhile, which converts only later times.
RawEvent* close_unwound(ThreadState& t, RawEvent* p) {
  ShadowFrame f = pop_frame(t);
  __atomic_store_n(&t.unwound_frames, t.unwound_frames + 1, __ATOMIC_RELAXED);
  if (f.key & kDroppedTag) {
    ++t.pending_lost;  // its enter was dropped, so its exit counts as dropped too
    return p;
  }
  p = room_for(t, p, 3);
  if (p == nullptr) {
    ++t.pending_lost;
    return nullptr;
  }
  const uint64_t now = now_raw();
  if (t.pending_lost != 0) p = mark_lost(t, p, now);
  const bool op = (f.key & kOpTag) != 0;
  p->a = now;
  p->b = pack(op ? RawKind::kFailOp : RawKind::kFailFn, op ? f.key & ~kOpTag : f.key);
  ++p;
  p->a = g_unwound_cause;
  p->b = pack(RawKind::kCause, 0);
  ++t.order;
  return p + 1;
}

// Closes the open frames that have provably returned, innermost first:
// those entered deeper on this thread's own stack than `sp`, and those at
// `sp` itself that `returned_at_sp` says are gone. Only frames on this
// thread's stack are compared (a handler on an alternate stack or a
// coroutine's stack is not).
template <typename ReturnedAtSp>
RawEvent* close_frames_below(ThreadState& t, RawEvent* p, uint64_t sp,
                             ReturnedAtSp returned_at_sp) {
  if (!on_this_stack(t, sp)) return p;
  while (t.depth > 0) {
    const ShadowFrame& top = t.shadow[t.depth - 1];
    if (!on_this_stack(t, top.sp)) break;
    if (top.sp > sp || (top.sp == sp && !returned_at_sp(top))) break;
    p = close_unwound(t, p);
  }
  return p;
}

// After a longjmp: the frames entered deeper than the probed function's
// stack pointer, or an earlier call of the same function at the same stack
// position, have been left.
RawEvent* pop_jumped_over(ThreadState& t, RawEvent* p, uint64_t key, uint64_t sp) {
  return close_frames_below(t, p, sp,
                            [key](const ShadowFrame& f) { return (f.key & ~kDroppedTag) == key; });
}

// Before an exit whose enter was never recorded: every frame opened at or
// below the exiting function's stack pointer returned before it did,
// whether or not its exit was seen (at the same stack pointer: opened by
// the exiting function itself, or by a sibling called before it from the
// same place). Seen in a real run: a request handler's enter was recorded
// and its exit not, and every later request of that thread joined one 10-s
// trace; its caller's exit came, unmatched, at the end of every request.
RawEvent* close_returned_below(ThreadState& t, RawEvent* p, uint64_t sp) {
  return close_frames_below(t, p, sp, [](const ShadowFrame&) { return true; });
}

// The open frame an exit of `key` at `sp` belongs to, or -1: the nearest
// frame of that key at the same stack pointer, else the nearest of that key.
int64_t frame_of_exit(const ThreadState& t, uint64_t key, uint64_t sp) {
  int64_t nearest = -1;
  for (int64_t i = static_cast<int64_t>(t.depth) - 1; i >= 0; --i) {
    if ((t.shadow[i].key & ~kDroppedTag) != key) continue;
    if (sp != 0 && t.shadow[i].sp == sp) return i;
    if (nearest < 0) nearest = i;
  }
  return nearest;
}

}  // namespace

void set_unwound_cause(uint32_t cause) { g_unwound_cause = cause; }

void load_trace_start(std::string_view globs) {
  std::vector<std::string> patterns;
  while (!globs.empty()) {
    size_t end = globs.find_first_of(";\n");
    std::string_view item = globs.substr(0, end);
    while (!item.empty() && (item.front() == ' ' || item.front() == '+')) item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) patterns.emplace_back(item);
    if (end == std::string_view::npos) break;
    globs.remove_prefix(end + 1);
  }
  if (patterns.empty()) return;
  auto* starts = new std::vector<uint64_t>;
  for_each_function_symbol([&](uint64_t address, const char* name) {
    std::string readable = demangle(name);
    for (const std::string& glob : patterns) {
      if (glob_match(glob, readable)) {
        starts->push_back(address);
        return;
      }
    }
  });
  std::sort(starts->begin(), starts->end());
  starts->erase(std::unique(starts->begin(), starts->end()), starts->end());
  g_trace_starts = starts;
}

bool starts_trace(uint64_t address) {
  const std::vector<uint64_t>* starts = g_trace_starts;
  return starts == nullptr || std::binary_search(starts->begin(), starts->end(), address);
}

bool enter_slow(ThreadState& t, RawKind kind, uint64_t id, uint64_t key, uint64_t sp) {
  const uint8_t status = t.status;
  if (status == kThreadInProbe) {
    // A signal handler interrupted a probe of this thread: this call's
    // enter and exit are both counted here; its exit probe returns at once.
    __atomic_fetch_add(&t.signal_lost, 2, __ATOMIC_RELAXED);
    __atomic_fetch_add(&t.signal_lost_total, 2, __ATOMIC_RELAXED);
    return false;
  }
  if (status == kThreadOff) return false;
  ProbeWindow window(t);
  if (status == kThreadNew) {
    Activation a = activate_thread(t);
    if (a != Activation::kActive) {
      window.leave_as(a == Activation::kNever ? kThreadOff : kThreadNew);
      return false;
    }
  }
  take_signal_losses(t);
  RawEvent* p = t.cur.load(std::memory_order_relaxed);
  if (status == kThreadResync) p = pop_jumped_over(t, p, key, sp);
  if (t.depth == 0 && kind == RawKind::kEnterFn && !starts_trace(id)) {
    // Outside every trace (trace_start): nothing is recorded, and its exit
    // finds depth 0 and returns at once.
    if (p != nullptr) t.cur.store(p, std::memory_order_release);
    return false;
  }
  if (t.depth == t.shadow_capacity && !grow_shadow(t)) {
    if (p != nullptr) t.cur.store(p, std::memory_order_release);
    return false;
  }
  // Room for a lost marker, the trace begin and parent, three W3C fields
  // (begin_trace), and the enter.
  p = room_for(t, p, kBufferSlack);
  if (p == nullptr) {
    push_frame(t, key | kDroppedTag, sp);
    ++t.pending_lost;
    return false;
  }
  const uint64_t now = now_raw();
  if (t.pending_lost != 0) p = mark_lost(t, p, now);
  if (t.depth == 0) p = begin_trace(t, p);
  p->a = now;
  p->b = pack(kind, id);
  t.cur.store(p + 1, std::memory_order_release);
  push_frame(t, key, sp);
  ++t.order;
  return true;
}

void exit_outside_trace(uint64_t key, uint64_t site) {
  const FunctionFilter* filter = g_function_filter.load(std::memory_order_acquire);
  if (filter != nullptr && !filter->allows(key)) request_callsite_patch(key, site);
}

void exit_slow(ThreadState& t, RawKind kind, uint64_t id, uint64_t key, uint64_t sp, uint64_t cause,
               uint64_t site) {
  const uint8_t status = t.status;
  // Inside a handler that interrupted a probe: counted with its enter.
  if (status == kThreadInProbe || status == kThreadOff) return;
  const bool top_matches = (t.shadow[t.depth - 1].key & ~kDroppedTag) == key;
  if (!top_matches && (kind == RawKind::kExitFn || kind == RawKind::kFailFn)) {
    // The common mismatch: a function excluded by patterns or culling was
    // never entered on the shadow stack.
    const FunctionFilter* filter = g_function_filter.load(std::memory_order_acquire);
    if (filter != nullptr && !filter->allows(id)) {
      // Its hook call site becomes a NOP (a hook's exit only: site != 0).
      if (site != 0) request_callsite_patch(id, site);
      return;
    }
  }
  ProbeWindow window(t);
  if (status == kThreadNew) {
    // The forking thread in a child: its open frames return here first.
    Activation a = activate_thread(t);
    if (a != Activation::kActive) {
      window.leave_as(a == Activation::kNever ? kThreadOff : kThreadNew);
      return;
    }
  }
  take_signal_losses(t);
  RawEvent* p = t.cur.load(std::memory_order_relaxed);
  if (!top_matches) {
    int64_t frame = frame_of_exit(t, key, sp);
    if (frame < 0) {
      // An exit without its enter: ignored, and counted; what it proves
      // returned is closed.
      __atomic_store_n(&t.unmatched_exits, t.unmatched_exits + 1, __ATOMIC_RELAXED);
      p = close_returned_below(t, p, sp);
      if (p != nullptr) t.cur.store(p, std::memory_order_release);
      return;
    }
    // The frames above it were left without their exits (longjmp over
    // them, an exception through code without unwind tables, a missing
    // sonde_end): close them before this exit.
    while (t.depth > static_cast<uint64_t>(frame) + 1) p = close_unwound(t, p);
  }
  ShadowFrame f = pop_frame(t);
  if (f.key & kDroppedTag) {
    ++t.pending_lost;
  } else if ((p = room_for(t, p, 3)) == nullptr) {
    ++t.pending_lost;
  } else {
    const uint64_t now = now_raw();
    if (t.pending_lost != 0) p = mark_lost(t, p, now);
    p->a = now;
    p->b = pack(kind, id);
    if (kind == RawKind::kFailFn || kind == RawKind::kFailOp) {
      ++p;
      p->a = cause;
      p->b = pack(RawKind::kCause, 0);
    }
    ++p;
    ++t.order;
  }
  if (p != nullptr) t.cur.store(p, std::memory_order_release);
}

}  // namespace sonde::monitor
