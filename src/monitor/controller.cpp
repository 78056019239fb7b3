// Threads and their buffers: a thread's first probe activates it (channel,
// shadow stack, buffer), full buffers go to the writer, and a thread that
// ends hands off its last one. The probes' slow path (probe_path.hpp calls
// next_buffer, begin_trace, grow_shadow, mark_lost). The rest of the
// controller: controller_state.hpp.
#include "monitor/controller.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "monitor/controller_state.hpp"
#include "sonde/sonde.hpp"

// Starts at 1 ("unstarted"): the first probe calls in and starts monitoring.
extern "C" {
SONDE_API unsigned char sonde_probe_gate = 1;
SONDE_API unsigned char sonde_op_off_tag = 3;  // g_op_tag + 1
}

// glibc's: the top of the main thread's stack (exported, used by ld.so and
// libpthread).
extern "C" void* __libc_stack_end;

namespace sonde::monitor {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

std::atomic<uint8_t> g_mode{kModeUnstarted};

void set_mode(uint8_t mode) {
  g_mode.store(mode, std::memory_order_relaxed);
  __atomic_store_n(&sonde_probe_gate, mode == kModeOn || mode == kModeUnstarted ? 1 : 0,
                   __ATOMIC_RELAXED);
}

namespace controller {

pthread_key_t g_thread_key;

namespace {

// Where a thread without a buffer points: cur == end, limit == begin, so
// every bounds check fails and nothing is ever written here.
RawEvent g_no_buffer[kBufferSlack];

// The stack this thread runs on: frames are compared by stack pointer only
// within it (signal handlers on an alternate stack and coroutines are not).
void note_stack_bounds(ThreadState& t) {
  pthread_attr_t attr;
  void* addr = nullptr;
  size_t size = 0;
  t.stack_lo = t.stack_hi = 0;
  // The main thread without pthread_getattr_np, which reads
  // /proc/self/maps with fopen (malloc) for it: its first probe may run in
  // a signal handler (the program's timer fired before its first monitored
  // call; ThreadSanitizer reported it in test_signal_probes, 2026-11-29).
  // Its stack grows down from __libc_stack_end by at most RLIMIT_STACK;
  // getrlimit is a system call, safe in a handler.
  if (static_cast<pid_t>(syscall(SYS_gettid)) == getpid()) {
    rlimit limit{};
    const auto top = reinterpret_cast<uint64_t>(__libc_stack_end);
    uint64_t bytes = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      bytes = limit.rlim_cur;
    const uint64_t page = 4096;
    t.stack_hi = (top + page - 1) & ~(page - 1);
    t.stack_lo = t.stack_hi > bytes ? t.stack_hi - bytes : 0;
    return;
  }
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
    t.stack_lo = reinterpret_cast<uint64_t>(addr);
    t.stack_hi = t.stack_lo + size;
  }
  pthread_attr_destroy(&attr);
}

void add_health(ThreadState& t) {
  State& s = state();
  s.signal_lost.fetch_add(__atomic_exchange_n(&t.signal_lost_total, 0, __ATOMIC_RELAXED),
                          std::memory_order_relaxed);
  s.unwound_frames.fetch_add(t.unwound_frames, std::memory_order_relaxed);
  s.unmatched_exits.fetch_add(t.unmatched_exits, std::memory_order_relaxed);
  t.unwound_frames = t.unmatched_exits = 0;
}

// The first probe to give up waiting says so, once per stall, with write(2):
// it may be the thread that holds stdio's lock.
void note_writer_stalled(State& s) {
  s.writer_stalls.fetch_add(1, std::memory_order_relaxed);  // waits that timed out
  if (s.writer_stalled.exchange(true)) return;
  static const char kMsg[] =
      "sonde: WARNING: the writer returned no buffer within block_timeout_ms; events are dropped "
      "and counted until it catches up\n";
  ssize_t ignored = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  (void)ignored;
}

bool take_buffer(ThreadState& t, Buffer* b) {
  t.buffer = b;
  b->channel = t.channel;
  b->used = 0;
  b->final = false;
  t.limit = b->events + b->capacity - kBufferSlack;
  t.cur.store(b->events, std::memory_order_release);
  t.channel->current.store(b, std::memory_order_release);
  return true;
}

Buffer* new_buffer_for(ThreadChannel* ch) {
  State& s = state();
  {
    MonitorLock lock(s.channels_mu);
    if (!s.recycled.empty()) {
      Buffer* b = s.recycled.back();
      s.recycled.pop_back();
      ++ch->buffers_owned;
      return b;
    }
  }
  Buffer* b = allocate_buffer(s.config.buffer_events);
  if (b != nullptr) ++ch->buffers_owned;
  return b;
}

}  // namespace

void thread_exit(void* arg) {
  auto* ch = static_cast<ThreadChannel*>(arg);
  ThreadState& t = t_state;
  // The writer reads live threads' state under channels_mu (drain_partial,
  // the loss counts, health): this thread's goes away under it, before
  // the final hand-off, after which the writer may free the channel.
  const bool handing_off =
      (t.status == kThreadActive || t.status == kThreadResync) && t.channel == ch;
  if (handing_off) t.status = kThreadInProbe;  // a handler's probe from here on only counts itself
  {
    MonitorLock lock(state().channels_mu);
    if (handing_off) {
      ch->ending_buffer = t.buffer;
      RawEvent* cur = t.cur.load(std::memory_order_relaxed);
      ch->ending_used = t.buffer != nullptr && cur >= t.buffer->events
                            ? static_cast<size_t>(cur - t.buffer->events)
                            : 0;
      ch->ending.store(true, std::memory_order_release);
    }
    if (t.channel == ch) ch->state = nullptr;
    add_health(t);
  }
  if (handing_off) hand_off(t, /*final=*/true);
  // Probes in later thread-exit code see status off (and depth 0) and
  // return before touching the shadow stack.
  t.status = kThreadOff;
  t.depth = 0;
  free_shadow(t);
}

void set_no_buffer(ThreadState& t) {
  t.buffer = nullptr;
  t.limit = g_no_buffer;
  t.cur.store(g_no_buffer + kBufferSlack, std::memory_order_relaxed);
}

// Gives the current buffer (even partly filled) to the writer.
void hand_off(ThreadState& t, bool final) {
  State& s = state();
  ThreadChannel* ch = t.channel;
  Buffer* b = t.buffer;
  if (final) t.pending_lost += __atomic_exchange_n(&t.signal_lost, 0, __ATOMIC_RELAXED);
  if (b == nullptr) {
    if (final) {
      // No buffer to carry the final flag: report the loss count directly.
      s.lost_unreported.fetch_add(t.pending_lost, std::memory_order_relaxed);
      t.pending_lost = 0;
      ch->exited.store(true, std::memory_order_release);
    }
    return;
  }
  RawEvent* cur = t.cur.load(std::memory_order_relaxed);
  if (final && t.pending_lost != 0 && cur < b->events + b->capacity) {
    cur = mark_lost(t, cur, now_raw());
  }
  b->used = static_cast<size_t>(cur - b->events);
  b->final = final;
  t.buffer = nullptr;
  ch->current.store(nullptr, std::memory_order_relaxed);
  set_no_buffer(t);
  if (s.config.synchronous) {
    MonitorLock lock(s.core_mu);
    if (s.core) {
      size_t from = ch->partial_buffer == b ? ch->partial_done : 0;
      cull_observe(*ch, b->events + from, b->events + b->used, s.core->functions_seen(),
                   names_in_log(s), /*may_decide=*/false);
      s.core->consume(*ch, b->events + from, b->events + b->used);
    }
    ch->partial_buffer = nullptr;
    s.recorded.fetch_add(b->used, std::memory_order_relaxed);
    s.buffers_written.fetch_add(1, std::memory_order_relaxed);
    if (final) {
      MonitorLock clock(s.channels_mu);
      s.recycled.push_back(b);
    } else {
      ch->returns.push(b);
    }
    if (final) ch->exited.store(true, std::memory_order_release);
    return;
  }
  ch->handed_off.fetch_add(1, std::memory_order_release);
  if (final) ch->exited.store(true, std::memory_order_release);
  s.full.push(b);
  s.doorbell.ring();
}

}  // namespace controller

using namespace controller;

Activation activate_thread(ThreadState& t) {
  ensure_started();
  State& s = state();
  if (g_mode.load(std::memory_order_relaxed) != kModeOn) return Activation::kNotNow;
  // The shadow stack before the channel is published (under channels_mu):
  // the writer reads it at close through the channel.
  if (t.shadow == nullptr && !grow_shadow(t)) return Activation::kNever;
  if (t.channel == nullptr) {
    note_stack_bounds(t);
    auto* ch = new ThreadChannel;
    ch->os_tid = static_cast<uint64_t>(syscall(SYS_gettid));
    char name[32] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    ch->name = name;
    ch->state = &t;
    {
      MonitorLock lock(s.channels_mu);
      ch->index = s.next_thread_index++;
      s.channels.push_back(ch);
    }
    t.channel = ch;
    pthread_setspecific(g_thread_key, ch);
  }
  if (t.buffer == nullptr) {
    Buffer* b = new_buffer_for(t.channel);
    if (b == nullptr) {
      set_no_buffer(t);
    } else {
      take_buffer(t, b);
    }
  }
  if (t.resume_after_fork) {
    // The forking thread in the child: its open frames continue a trace
    // whose parent is the fork point in the parent's trace.
    t.resume_after_fork = 0;
    if (t.depth > 0 && t.buffer != nullptr) {
      t.cur.store(begin_trace(t, t.cur.load(std::memory_order_relaxed)), std::memory_order_release);
      // The frames opened before the fork still exit here and count, but
      // their exits are the parent's: the child's log leaves them out.
      t.order_diverged = 1;
    }
  }
  return Activation::kActive;
}

RawEvent* next_buffer(ThreadState& t) {
  State& s = state();
  ThreadChannel* ch = t.channel;
  if (t.buffer != nullptr) hand_off(t, /*final=*/false);
  if (Buffer* b = ch->returns.pop())
    return take_buffer(t, b), t.cur.load(std::memory_order_relaxed);
  // The flight recorder holds a ring of the thread's buffers on top of
  // the ones it fills and the writer has not taken yet.
  static const uint32_t own_limit =
      s.config.buffers_per_thread + (s.config.flight ? flight_ring_buffers(s.config) : 0);
  if (ch->buffers_owned < own_limit) {
    if (Buffer* b = new_buffer_for(ch))
      return take_buffer(t, b), t.cur.load(std::memory_order_relaxed);
  }
  // The writer is behind: take one of the process's burst buffers rather
  // than wait (measured on real programs: the writer resolving the names
  // of ~1,000 new functions at start-up made probes wait 0.2-0.7 s).
  // At most as many as the return ring holds, so the writer can always give
  // every buffer back to its thread.
  if (ch->buffers_owned < ReturnRing::kCapacity &&
      s.burst_taken.load(std::memory_order_relaxed) < s.config.burst_buffers &&
      s.burst_taken.fetch_add(1, std::memory_order_relaxed) < s.config.burst_buffers) {
    if (Buffer* b = new_buffer_for(ch))
      return take_buffer(t, b), t.cur.load(std::memory_order_relaxed);
  }
  if (s.config.policy == FullPolicy::kBlock &&
      g_mode.load(std::memory_order_relaxed) != kModeShutdown && !s.config.synchronous &&
      !s.writer_stalled.load(std::memory_order_relaxed)) {
    // Block until the writer returns a buffer; bounded so that a stuck
    // writer can never deadlock the program (then we drop and count). The
    // writer wakes this thread as it returns a buffer: sleeping in growing
    // naps instead overslept the return by up to a nap, time the probe then
    // could not make up.
    const int64_t start = monotonic_ns_now();
    const int64_t deadline = start + int64_t{s.config.block_timeout_ms} * 1000000;
    for (;;) {
      if (Buffer* b = ch->returns.pop()) {
        s.blocked_wait_ns.fetch_add(static_cast<uint64_t>(monotonic_ns_now() - start),
                                    std::memory_order_relaxed);
        return take_buffer(t, b), t.cur.load(std::memory_order_relaxed);
      }
      int64_t left = deadline - monotonic_ns_now();
      if (left <= 0) break;
      ch->returns.wait_for_push(static_cast<uint64_t>(std::min<int64_t>(left, 10000000)));
    }
    s.blocked_wait_ns.fetch_add(static_cast<uint64_t>(monotonic_ns_now() - start),
                                std::memory_order_relaxed);
    note_writer_stalled(s);
  }
  return nullptr;
}

// The shadow stack lives in its own mapping, grown by a new mapping and a
// copy: mmap is async-signal-safe, so a probe in a signal handler that
// interrupted malloc can still grow it.
bool grow_shadow(ThreadState& t) {
  constexpr uint32_t kMaxDepth = 1u << 22;
  constexpr uint32_t kFirstDepth = 256;
  if (t.shadow_capacity >= kMaxDepth) {
    t.pending_lost += 2;  // this call's enter and exit
    return false;
  }
  uint32_t cap = t.shadow == nullptr ? kFirstDepth : t.shadow_capacity * 2;
  void* mem = mmap(nullptr, cap * sizeof(ShadowFrame), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    if (t.shadow != nullptr) t.pending_lost += 2;
    return false;
  }
  auto* grown = static_cast<ShadowFrame*>(mem);
  if (t.shadow != nullptr) {
    std::memcpy(grown, t.shadow, t.depth * sizeof(ShadowFrame));
    munmap(t.shadow, t.shadow_capacity * sizeof(ShadowFrame));
  }
  t.shadow = grown;
  t.shadow_capacity = cap;
  return true;
}

void free_shadow(ThreadState& t) {
  if (t.shadow != nullptr) munmap(t.shadow, t.shadow_capacity * sizeof(ShadowFrame));
  t.shadow = nullptr;
  t.shadow_capacity = 0;
}

RawEvent* begin_trace(ThreadState& t, RawEvent* p) {
  State& s = state();
  if ((t.trace_id & (kTraceBlock - 1)) == 0) {
    t.trace_id =
        s.trace_base + s.next_trace_block.fetch_add(kTraceBlock, std::memory_order_relaxed);
  }
  p->a = t.trace_id++;
  p->b = pack(RawKind::kTraceBegin, 0);
  ++p;
  t.continued = t.has_parent;
  t.order_diverged = 0;
  t.w3c_high = 0;
  t.w3c_low = 0;
  if (t.has_parent) {
    p->a = t.parent_trace_id;
    p->b = pack(RawKind::kTraceParent, static_cast<uint64_t>(t.parent_order_id + 1));
    ++p;
    if (t.parent_is_w3c) {
      t.w3c_high = t.parent_w3c_high;
      t.w3c_low = t.parent_w3c_low;
      p[0] = {t.w3c_high, pack(RawKind::kW3c, kW3cTraceHigh)};
      p[1] = {t.w3c_low, pack(RawKind::kW3c, kW3cTraceLow)};
      p[2] = {t.parent_span_id, pack(RawKind::kW3c, kW3cParentSpan)};
      p += 3;
      t.parent_is_w3c = 0;
    }
    t.has_parent = 0;
  }
  t.order = 0;
  return p;
}

RawEvent* mark_lost(ThreadState& t, RawEvent* p, uint64_t now) {
  p->a = now;
  p->b = pack(RawKind::kLost, t.pending_lost);
  // Readers advance the order index by a marker's count (Kieker's rules
  // then see the gap); so does the thread, so that the positions it hands
  // out (contexts, diagnostic records) are the indexes readers assign.
  t.order += static_cast<uint32_t>(t.pending_lost);
  t.pending_lost = 0;
  return p + 1;
}

}  // namespace sonde::monitor
