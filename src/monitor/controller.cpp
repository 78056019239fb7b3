#include "monitor/controller.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "monitor/callsite_patch.hpp"
#include "monitor/channel.hpp"
#include "monitor/cull.hpp"
#include "monitor/diagnostic_records.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/patterns.hpp"
#include "monitor/process_info.hpp"
#include "monitor/registry.hpp"
#include "monitor/samplers/record_builder.hpp"
#include "monitor/sampling.hpp"
#include "monitor/writer_core.hpp"
#include "monitor/xray_mode.hpp"
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

// Set while this thread runs start(), and for good on the writer thread.
// Starting calls libstdc++ (strings, streams), and a program whose
// instrumented template instances interpose libstdc++'s own (an exported
// std::string::_M_create, called back from libstdc++'s stringbuf) reached a
// hook from inside start(): call_once re-entered on the same thread and the
// program hung before main. Such a probe now finds monitoring not started
// and records nothing. The writer, which may reach such code while start()
// still runs, must not wait for it either.
__thread bool t_starting __attribute__((tls_model("initial-exec"))) = false;
std::atomic<uint8_t> g_mode{kModeUnstarted};

void set_mode(uint8_t mode) {
  g_mode.store(mode, std::memory_order_relaxed);
  __atomic_store_n(&sonde_probe_gate, mode == kModeOn || mode == kModeUnstarted ? 1 : 0,
                   __ATOMIC_RELAXED);
}

namespace {

// Where a thread without a buffer points: cur == end, limit == begin, so
// every bounds check fails and nothing is ever written here.
RawEvent g_no_buffer[kBufferSlack];

struct State {
  Config config;
  // Lock order: core_mu before channels_mu. Neither is taken on the hot path.
  std::mutex channels_mu;                // channel list
  std::vector<ThreadChannel*> channels;  // live and not yet drained
  std::vector<Buffer*> recycled;         // buffers of exited threads
  uint32_t next_thread_index = 0;
  FullStack full;
  WriterDoorbell doorbell;  // rung after pushing to `full` and on requests
  std::atomic<uint64_t> next_trace_block{0};
  uint64_t trace_base = 0;
  std::unique_ptr<WriterCore> core;
  std::mutex core_mu;  // sync mode and shutdown
  std::thread writer;
  std::atomic<bool> stop{false};
  std::atomic<bool> crash_request{false};
  std::atomic<bool> crash_done{false};
  // Flush tickets: a caller takes ticket T (flush_requested after its
  // increment) and waits until flush_done >= T. The writer notes the
  // requested count before it drains, so a flush already under way when the
  // ticket was taken does not count for it.
  std::atomic<uint64_t> flush_requested{0};
  std::atomic<uint64_t> flush_done{0};
  // Code ranges about to be unmapped (dlclose): applied by the writer after
  // the flush that resolved every address seen before the unload.
  std::mutex unload_mu;
  std::vector<std::pair<uint64_t, uint64_t>> unloaded_ranges;
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> buffers_written{0};
  std::atomic<uint64_t> lost_unreported{0};
  // Health of exited threads (live threads keep theirs in ThreadState).
  std::atomic<uint64_t> unwound_frames{0};
  std::atomic<uint64_t> unmatched_exits{0};
  std::atomic<uint64_t> signal_lost{0};
  // Block policy: a wait that timed out marks the writer stalled; until it
  // returns a buffer again no probe waits (they drop and count instead).
  std::atomic<bool> writer_stalled{false};
  std::atomic<uint32_t> burst_taken{0};      // burst buffers handed out (config.burst_buffers)
  std::atomic<uint64_t> writer_stalls{0};    // block waits that timed out
  std::atomic<uint64_t> blocked_wait_ns{0};  // time probes spent waiting for buffers
  // A stop signal (SIGTERM, SIGINT, SIGHUP) asks the writer to close the log.
  std::atomic<int> stop_signal{0};
  std::atomic<bool> stop_signal_done{false};
  std::atomic<pid_t> writer_tid{0};
  std::atomic<pid_t> writer_pid{0};  // the process the writer thread runs in
  int64_t writer_cpu_ns = 0;         // the writer thread's CPU time, taken when it stops
  std::mutex patterns_mu;
  PatternSet patterns;
  std::atomic<uint8_t> op_generation{1};
  bool closed = false;
  std::atomic<bool> restart_after_fork{false};
  std::mutex restart_mu;
};

State& state() {
  static State* s = new State;  // never destroyed: probes may run during exit
  return *s;
}

std::once_flag g_start_once;
pthread_key_t g_thread_key;
constexpr uint64_t kTraceBlock = 4096;

void hand_off(ThreadState& t, bool final);
void add_health(ThreadState& t);
void writer_loop();
void install_crash_handlers();
void install_stop_handlers();
void close_for_stop_signal(State& s);
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
void on_fork_prepare();
void on_fork_parent();
void on_fork_child();

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

// The names the log gave functions: culling names its candidates with
// them. Called with core_mu held.
FunctionNames names_in_log(State& s) {
  return [&s](uint64_t a) { return s.core->name_function(a); };
}

// After the log is closed nothing may be written to it: names it has only.
FunctionNames names_already_in_log(State& s) {
  return [&s](uint64_t a) { return s.core->function_name(a); };
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

std::atomic<uint8_t> g_op_tag{2};

bool operation_monitored(std::string_view name) {
  State& s = state();
  MonitorLock lock(s.patterns_mu);
  return s.patterns.monitored(name);
}

std::string set_patterns(std::string_view text, bool before_recording) {
  State& s = state();
  PatternSet next;
  if (std::string err = next.parse(text); !err.empty()) return err;
  {
    MonitorLock lock(s.patterns_mu);
    s.patterns = next;
  }
  // New generation: every manual probe re-evaluates on its next call.
  uint8_t g = s.op_generation.load();
  g = g >= 120 ? 1 : g + 1;
  s.op_generation.store(g);
  g_op_tag.store(static_cast<uint8_t>(g * 2));
  __atomic_store_n(&sonde_op_off_tag, static_cast<uint8_t>(g * 2 + 1), __ATOMIC_RELAXED);
  rebuild_function_filter(next, before_recording);
  xray_apply_patterns(next);
  return "";
}

const Config& current_config() { return state().config; }

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
  if (ch->buffers_owned < s.config.buffers_per_thread) {
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
  if (t.has_parent) {
    p->a = t.parent_trace_id;
    p->b = pack(RawKind::kTraceParent, static_cast<uint64_t>(t.parent_order_id + 1));
    ++p;
    t.has_parent = 0;
  }
  t.order = 0;
  return p;
}

RawEvent* mark_lost(ThreadState& t, RawEvent* p, uint64_t now) {
  p->a = now;
  p->b = pack(RawKind::kLost, t.pending_lost);
  t.pending_lost = 0;
  return p + 1;
}

// ---------------------------------------------------------------------------
// The writer thread.

namespace {

// Culling decides while the writer runs; not in the final drains at exit,
// where nothing would come of it (cull_print_summary reports instead).
bool decisions_allowed() { return g_mode.load(std::memory_order_relaxed) == kModeOn; }

void drain_full(State& s) {
  for (Buffer* b = s.full.take_all(); b != nullptr;) {
    Buffer* next = b->next;
    ThreadChannel* ch = b->channel;
    size_t from = ch->partial_buffer == b ? ch->partial_done : 0;
    cull_observe(*ch, b->events + from, b->events + b->used, s.core->functions_seen(),
                 names_in_log(s), decisions_allowed());
    s.core->consume(*ch, b->events + from, b->events + b->used);
    ch->partial_buffer = nullptr;
    ch->partial_done = 0;
    ++ch->processed;
    s.recorded.fetch_add(b->used, std::memory_order_relaxed);
    s.buffers_written.fetch_add(1, std::memory_order_relaxed);
    if (s.writer_stalled.load(std::memory_order_relaxed)) s.writer_stalled.store(false);
    if (b->final || !ch->returns.push(b)) {
      MonitorLock lock(s.channels_mu);
      s.recycled.push_back(b);
    }
    b = next;
  }
}

// Writes what live threads have put into their current buffers, so idle
// threads' events reach the log, and everything does before a crash.
void drain_partial(State& s) {
  MonitorLock lock(s.channels_mu);
  for (ThreadChannel* ch : s.channels) {
    if (ch->exited.load(std::memory_order_acquire) || ch->state == nullptr) continue;
    RawEvent* cur = ch->state->cur.load(std::memory_order_acquire);
    Buffer* b = ch->current.load(std::memory_order_acquire);
    // Only when every earlier buffer is written and the snapshot is consistent.
    if (b == nullptr || ch->handed_off.load(std::memory_order_acquire) != ch->processed) continue;
    if (cur < b->events || cur > b->events + b->capacity) continue;
    size_t upto = static_cast<size_t>(cur - b->events);
    size_t from = ch->partial_buffer == b ? ch->partial_done : 0;
    if (upto <= from) continue;
    cull_observe(*ch, b->events + from, b->events + upto, s.core->functions_seen(), names_in_log(s),
                 decisions_allowed());
    s.core->consume(*ch, b->events + from, b->events + upto);
    s.recorded.fetch_add(upto - from, std::memory_order_relaxed);
    ch->partial_buffer = b;
    ch->partial_done = upto;
  }
}

// Frees channels of exited threads whose buffers are all written.
void reap_channels(State& s) {
  MonitorLock lock(s.channels_mu);
  for (size_t i = 0; i < s.channels.size();) {
    ThreadChannel* ch = s.channels[i];
    if (ch->exited.load(std::memory_order_acquire) &&
        ch->handed_off.load(std::memory_order_acquire) == ch->processed) {
      while (Buffer* b = ch->returns.pop()) s.recycled.push_back(b);
      s.channels[i] = s.channels.back();
      s.channels.pop_back();
      delete ch;
    } else {
      ++i;
    }
  }
}

void report_thread_losses(State& s) {
  uint64_t lost = s.lost_unreported.exchange(0);
  if (lost != 0) s.core->report_loss(UINT32_MAX, lost, "dropped on exited threads");
}

uint32_t g_still_running_cause = 0;

// At close, frames still open (a server's event loop, a thread that never
// returns, exit() called from deep inside, a thread that returned or ended
// while the log was being closed, whose exits the probes no longer record)
// get failed exits whose cause says so, so every trace in the log is
// complete. The writer core closes them from the stream it wrote: a
// thread's own shadow stack may have moved on since the last drain.
void close_open_frames(State& s) { s.core->close_open_frames(g_still_running_cause, now_raw()); }

struct Health {
  uint64_t unwound_frames = 0;
  uint64_t unmatched_exits = 0;
  uint64_t signal_lost = 0;
};

// Exited threads' counts plus the live threads' (read racily: a count a
// live thread adds while we read shows up in the next reading).
Health current_health(State& s) {
  Health h;
  h.unwound_frames = s.unwound_frames.load();
  h.unmatched_exits = s.unmatched_exits.load();
  h.signal_lost = s.signal_lost.load();
  MonitorLock lock(s.channels_mu);
  for (ThreadChannel* ch : s.channels) {
    if (ch->state == nullptr || ch->exited.load()) continue;
    h.unwound_frames += __atomic_load_n(&ch->state->unwound_frames, __ATOMIC_RELAXED);
    h.unmatched_exits += __atomic_load_n(&ch->state->unmatched_exits, __ATOMIC_RELAXED);
    h.signal_lost += __atomic_load_n(&ch->state->signal_lost_total, __ATOMIC_RELAXED);
  }
  return h;
}

// The log ends with the monitor's health, so a reader can tell a trace cut
// by a longjmp from one the monitor broke. Called with core_mu held.
void write_health_record(State& s, const Health& h) {
  const format::RecordSchema* schema =
      format::find_builtin_schema("sonde.record.monitor.MonitorHealthRecord");
  // Only when something happened: a clean run's log stays exactly the
  // records the program produced (collectors and tests count them).
  if (schema == nullptr || h.unwound_frames + h.unmatched_exits + h.signal_lost +
                                   s.writer_stalls.load() + s.blocked_wait_ns.load() ==
                               0)
    return;
  static const std::string* host = nullptr;
  if (host == nullptr) host = new std::string(describe_process(s.config).hostname);
  samplers::RecordBuilder b(schema);
  b.set_int("timestamp", epoch_ns_now())
      .set_string("hostname", *host)
      .set_int("pid", getpid())
      .set_int("unwoundFrames", static_cast<int64_t>(h.unwound_frames))
      .set_int("unmatchedExits", static_cast<int64_t>(h.unmatched_exits))
      .set_int("signalLostEvents", static_cast<int64_t>(h.signal_lost))
      .set_int("writerStalls", static_cast<int64_t>(s.writer_stalls.load()))
      .set_int("blockedWaitNs", static_cast<int64_t>(s.blocked_wait_ns.load()));
  s.core->record(b.take());
}

// A thread ending while the log closes hands off its final buffer from its
// exit handler. drain_partial skips it once its state is gone, so when that
// hand-off lands after drain_full its events would never be written (seen
// under ASan: a worker that unwinds when monitoring stops lost its whole
// trace). The closing writer waits for such hand-offs, bounded; one that
// never arrives is reported as lost. Called with core_mu held.
bool ending_hand_off_pending(State& s, bool report) {
  MonitorLock lock(s.channels_mu);
  bool pending = false;
  for (ThreadChannel* ch : s.channels) {
    if (!ch->ending.load(std::memory_order_acquire)) continue;
    if (ch->exited.load(std::memory_order_acquire) &&
        ch->handed_off.load(std::memory_order_acquire) == ch->processed)
      continue;
    pending = true;
    if (report) {
      size_t done = ch->partial_buffer == ch->ending_buffer ? ch->partial_done : 0;
      if (ch->ending_used > done)
        s.core->report_loss(ch->index, ch->ending_used - done,
                            "thread ending at close: final buffer not received in time");
    }
  }
  return pending;
}

void drain_ending_threads(State& s) {
  constexpr int kSteps = 2000;  // 100 us each: 200 ms at most
  for (int i = 0; i < kSteps; ++i) {
    drain_full(s);
    if (!ending_hand_off_pending(s, /*report=*/false)) return;
    timespec nap{0, 100000};
    nanosleep(&nap, nullptr);
  }
  drain_full(s);
  ending_hand_off_pending(s, /*report=*/true);
}

void final_drain(State& s, bool closing) {
  MonitorLock lock(s.core_mu);
  if (!s.core || s.closed) return;
  drain_full(s);
  drain_partial(s);
  // (In synchronous mode a hand-off writes under core_mu itself: no wait.)
  if (closing && !s.config.synchronous) drain_ending_threads(s);
  report_thread_losses(s);
  drain_diagnostics(*s.core);
  if (closing) {
    // Events dropped on threads still running and not yet marked in a buffer.
    MonitorLock clock(s.channels_mu);
    for (ThreadChannel* ch : s.channels) {
      if (ch->state == nullptr || ch->exited.load()) continue;
      uint64_t pending = ch->state->pending_lost +
                         __atomic_exchange_n(&ch->state->signal_lost, 0, __ATOMIC_RELAXED);
      if (pending != 0) s.core->report_loss(ch->index, pending, "dropped, not yet marked at exit");
    }
  }
  if (closing) {
    close_open_frames(s);
    write_health_record(s, current_health(s));
  }
  s.core->flush(true);
}

// Called by the writer with core_mu held, after a flush: every address seen
// so far is resolved, so names of code about to be unmapped are safe, and
// an address reused by the next library must be resolved again.
void forget_unloaded_code(State& s) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  {
    MonitorLock lock(s.unload_mu);
    ranges.swap(s.unloaded_ranges);
  }
  for (const auto& [begin, end] : ranges) s.core->forget_functions(begin, end);
}

// The longest idle sleep: bounds how late a pattern-file change or a
// diagnostic record is noticed. Work that cannot wait rings the doorbell.
constexpr int64_t kIdleSleepMaxNs = 10000000;

bool writer_has_work(State& s) {
  return !s.full.empty() || s.stop.load(std::memory_order_seq_cst) ||
         s.stop_signal.load(std::memory_order_seq_cst) != 0 ||
         s.crash_request.load(std::memory_order_seq_cst) ||
         s.flush_requested.load(std::memory_order_seq_cst) !=
             s.flush_done.load(std::memory_order_relaxed);
}

// Sleeps until rung or the next deadline (`until_deadline_ms` from now).
void idle_sleep(State& s, int64_t until_deadline_ms) {
  if (until_deadline_ms <= 0) return;
  const int64_t sleep_ns = std::min(kIdleSleepMaxNs, until_deadline_ms * 1000000);
  const uint32_t ticket = s.doorbell.arm();
  if (writer_has_work(s)) {
    s.doorbell.disarm();
    return;
  }
  s.doorbell.sleep(ticket, static_cast<uint64_t>(sleep_ns));
}

void writer_loop() {
  State& s = state();
  // Before anything takes a lock: it calls dlsym (culling's leaves).
  prepare_code_classification();
  s.writer_tid = static_cast<pid_t>(syscall(SYS_gettid));
  t_starting = true;            // never waits for start() (ensure_started)
  t_state.status = kThreadOff;  // the writer never records itself
  t_probe_busy = 1;             // nor do the interposition probes (its own locks)
  pthread_setname_np(pthread_self(), "sonde-writer");
  // Asynchronous signals are blocked from this thread's birth (start_writer).
  auto now_ms = [] { return monotonic_ns_now() / 1000000; };
  int64_t next_flush = now_ms() + s.config.flush_interval_ms;
  int64_t next_clock = now_ms() + 100;
  int64_t clock_period = 100;
  Sampling sampling(s.config, [&](const format::Record& r) { s.core->record(r); });
  // Fault injection for the tests of the block policy's bound
  // (docs/configuration.md): the writer stalls as a hung disk would make it.
  if (uint32_t stall = s.config.fault_writer_stall_ms; stall != 0) {
    timespec nap{static_cast<time_t>(stall / 1000), static_cast<long>(stall % 1000) * 1000000};
    nanosleep(&nap, nullptr);
  }
  bool fresh = false;  // culling observes: partial buffers too, every ms
  while (!s.stop.load(std::memory_order_acquire)) {
    if (s.stop_signal.load(std::memory_order_acquire) != 0) {
      close_for_stop_signal(s);
      break;
    }
    bool idle = s.full.empty();
    {
      MonitorLock lock(s.core_mu);
      drain_full(s);
      drain_diagnostics(*s.core);
      int64_t t = now_ms();
      if (s.crash_request.load(std::memory_order_acquire)) {
        drain_full(s);  // buffers pushed since this iteration's first drain
        drain_partial(s);
        report_thread_losses(s);
        drain_diagnostics(*s.core);
        s.core->flush(true);
        s.crash_done.store(true, std::memory_order_release);
        s.crash_request.store(false);
      }
      const uint64_t requested = s.flush_requested.load(std::memory_order_acquire);
      if (requested != s.flush_done.load(std::memory_order_relaxed) || t >= next_flush) {
        drain_full(s);
        drain_partial(s);
        report_thread_losses(s);
        s.core->flush(true);
        forget_unloaded_code(s);
        next_flush = t + s.config.flush_interval_ms;
        s.flush_done.store(requested, std::memory_order_release);
      }
      if (t >= next_clock) {
        s.core->refresh_clock();
        // Pairs further apart give a better tick estimate; 1 s is plenty.
        clock_period = std::min<int64_t>(clock_period * 2, 1000);
        next_clock = t + clock_period;
      }
      sampling.poll(t);
      cull_poll(t, names_in_log(s));
      fresh = cull_wants_fresh_events(t);
      if (fresh) drain_partial(s);
      reap_channels(s);
    }
    // Outside core_mu: mprotect and code stores need no lock of the
    // writer's, and synchronous probes wait on core_mu.
    apply_callsite_patches();
    poll_patterns_file();
    poll_probes_file();
    if (idle) {
      const int64_t now = now_ms();
      idle_sleep(s, std::min({next_flush, next_clock, sampling.next_due_ms(),
                              fresh ? now + 1 : next_flush}) -
                        now);
    }
  }
  // For the summary: whether the writer keeps up shows in its CPU per event.
  timespec cpu{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  s.writer_cpu_ns = int64_t{cpu.tv_sec} * 1000000000 + cpu.tv_nsec;
}

// Called with core_mu held.
void print_summary(State& s) {
  if (!s.config.summary || !s.core) return;
  Totals t;
  t.written = s.core->events_written();
  t.dropped = s.core->events_lost();
  std::fprintf(stderr, "sonde: %llu events written, %llu lost, log: %s\n",
               static_cast<unsigned long long>(t.written),
               static_cast<unsigned long long>(t.dropped), s.core->writer().location().c_str());
  if (s.writer_cpu_ns > 0) {
    std::fprintf(stderr, "sonde: writer thread: %.1f ms CPU, %.2f ns per event\n",
                 static_cast<double>(s.writer_cpu_ns) / 1e6,
                 t.written == 0
                     ? 0.0
                     : static_cast<double>(s.writer_cpu_ns) / static_cast<double>(t.written));
  }
  if (uint64_t d = diagnostics_emitted() + diagnostics_dropped(); d != 0) {
    std::fprintf(stderr,
                 "sonde: %llu probe records (lock waits, database calls, messages), %llu dropped\n",
                 static_cast<unsigned long long>(diagnostics_emitted()),
                 static_cast<unsigned long long>(diagnostics_dropped()));
  }
  if (t.dropped != 0) {
    std::fprintf(stderr, "sonde: WARNING: %llu events were lost (policy %s%s)\n",
                 static_cast<unsigned long long>(t.dropped),
                 s.config.policy == FullPolicy::kBlock ? "block" : "drop",
                 s.core->writer().failed() ? ", write error" : "");
  }
  const Health h = current_health(s);
  if (h.unwound_frames + h.unmatched_exits + h.signal_lost != 0) {
    std::fprintf(stderr,
                 "sonde: %llu frames left without their exit (longjmp, missing end) closed as "
                 "unwound, %llu exits without an enter ignored, %llu events of probes in signal "
                 "handlers that interrupted a probe counted as lost\n",
                 static_cast<unsigned long long>(h.unwound_frames),
                 static_cast<unsigned long long>(h.unmatched_exits),
                 static_cast<unsigned long long>(h.signal_lost));
  }
  if (uint64_t stalls = s.writer_stalls.load(); stalls != 0 || s.blocked_wait_ns.load() != 0) {
    std::fprintf(stderr,
                 "sonde: writer health: probes waited %.1f ms in all for free buffers; %llu "
                 "stall(s) longer than block_timeout_ms (%u ms)\n",
                 static_cast<double>(s.blocked_wait_ns.load()) / 1e6,
                 static_cast<unsigned long long>(stalls), s.config.block_timeout_ms);
  }
  // Functions excluded by patterns have their hook calls patched too;
  // culling's summary has this line already.
  if (!s.config.cull && callsite_patch_stats().requested != 0) {
    std::fprintf(stderr, "sonde: excluded functions' %s\n", callsite_patch_summary().c_str());
  }
}

void start_writer(State& s) {
  ProcessInfo info = describe_process(s.config);
  s.core = std::make_unique<WriterCore>(s.config, make_event_writer(s.config), info);
  if (std::string err = s.core->open(); !err.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", err.c_str());
    s.core.reset();
    set_mode(kModeOff);
    return;
  }
  // Set here, not on the writer thread: a child that ends right after its
  // first probe may call _exit before the new thread has run at all.
  s.writer_pid = static_cast<pid_t>(syscall(SYS_getpid));
  // Asynchronous signals go to the program's threads, never to this one:
  // a stop signal's handler waits for this thread to close the log, and the
  // program's own handlers expect to run on the program's threads (and
  // their probes to be recorded). The thread inherits the mask, so it is
  // blocked from birth: set on the thread itself, it left a window in the
  // thread's start-up (glibc's, and ASan's, which calls pthread_getattr_np
  // and calloc) where an instrumented handler ran on it, and its probe's
  // own pthread_getattr_np deadlocked on the lock the interrupted call held
  // (seen under ASan, test_signal_probes, 1 run in 2). Faults in the
  // writer stay deliverable.
  sigset_t blocked, previous;
  sigfillset(&blocked);
  for (int sig : kFatalSignals) sigdelset(&blocked, sig);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  try {
    s.writer = std::thread(writer_loop);
  } catch (const std::exception& e) {  // out of threads or memory: the program goes on
    std::fprintf(stderr, "sonde: monitoring disabled: cannot start the writer thread: %s\n",
                 e.what());
    s.core.reset();
    set_mode(kModeOff);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void at_exit_handler() { shutdown_monitoring(); }

void start() {
  State& s = state();
  pthread_key_create(&g_thread_key, thread_exit);
  std::string err = load_config(s.config);
  if (!err.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", err.c_str());
    return;
  }
  if (!s.config.enabled) return;
  std::string patterns = s.config.patterns;
  if (!s.config.patterns_file.empty()) {
    std::ifstream in(s.config.patterns_file);
    if (!in) {
      std::fprintf(stderr, "sonde: monitoring disabled: cannot read patterns_file %s\n",
                   s.config.patterns_file.c_str());
      return;
    }
    std::string file_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    note_patterns_file_text(file_text);
    patterns += "\n" + file_text;
  }
  if (std::string perr = set_patterns(patterns, /*before_recording=*/true); !perr.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", perr.c_str());
    return;
  }
  if (std::string derr = start_diagnostics(s.config); !derr.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", derr.c_str());
    return;
  }
  select_timer(s.config.timer != TimerChoice::kMonotonic);
  if (s.config.timer == TimerChoice::kTsc && g_timer != TimerKind::kTsc) {
    std::fprintf(
        stderr, "sonde: timer=tsc requested but the TSC is not invariant; using clock_monotonic\n");
  }
  // Trace ids: a random high half per process, blocks of the low half per thread.
  uint64_t seed = static_cast<uint64_t>(epoch_ns_now()) ^ (static_cast<uint64_t>(getpid()) << 20);
  seed ^= seed >> 33;
  seed *= 0xff51afd7ed558ccdULL;
  seed ^= seed >> 33;
  s.trace_base = (seed & 0x7fffffff00000000ULL) | 0x100000000ULL;
  s.next_trace_block.store(kTraceBlock);  // ids with low bits 0 would look unset
  set_unwound_cause(intern_cause("left without returning (longjmp, or its exit was not seen)"));
  g_still_running_cause = intern_cause("still running when the log was closed");
  load_trace_start(s.config.trace_start);
  start_writer(s);
  if (!s.core) return;
  install_crash_handlers();
  if (s.config.stop_signals) install_stop_handlers();
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
  std::atexit(at_exit_handler);
  set_mode(kModeOn);
  if (s.config.xray) xray_start();
}

}  // namespace

void ensure_started() {
  if (t_starting) return;
  std::call_once(g_start_once, [] {
    t_starting = true;
    start();
    t_starting = false;
    if (g_mode.load() == kModeUnstarted) set_mode(kModeOff);  // start() failed or disabled
  });
  State& s = state();
  if (s.restart_after_fork.load(std::memory_order_acquire)) [[unlikely]] {
    // First probe in a forked child: open the child's own log.
    MonitorLock lock(s.restart_mu);
    if (s.restart_after_fork.load()) {
      s.restart_after_fork.store(false);
      start_writer(s);
      set_mode(s.core ? kModeOn : kModeOff);
    }
  }
}

void shutdown_monitoring() {
  State& s = state();
  uint8_t expected = g_mode.load();
  if (expected == kModeShutdown) return;
  set_mode(kModeShutdown);
  // Hand off this thread's buffer so its events are written in order.
  ThreadState& t = t_state;
  if ((t.status == kThreadActive || t.status == kThreadResync) && t.buffer != nullptr) {
    t.status = kThreadInProbe;
    hand_off(t, /*final=*/false);
    t.status = kThreadActive;
  }
  if (s.writer.joinable()) {
    s.stop.store(true, std::memory_order_release);
    s.doorbell.ring();
    s.writer.join();
  }
  final_drain(s, /*closing=*/true);
  MonitorLock lock(s.core_mu);
  if (s.core && !s.closed) {
    s.core->close();
    s.closed = true;
    print_summary(s);
    cull_print_summary(names_already_in_log(s));
  }
}

bool flush_now() {
  State& s = state();
  if (g_mode.load() != kModeOn) return false;
  ThreadState& t = t_state;
  if ((t.status == kThreadActive || t.status == kThreadResync) && t.buffer != nullptr) {
    t.status = kThreadInProbe;  // a signal handler's probe must not take the buffer meanwhile
    hand_off(t, false);
    next_buffer(t);
    t.status = kThreadActive;
  }
  // The writer thread cannot wait for itself (a dlclose inside elfutils).
  if (static_cast<pid_t>(syscall(SYS_gettid)) == s.writer_tid) return false;
  const uint64_t ticket = s.flush_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  s.doorbell.ring();
  for (int i = 0; i < 5000 && s.flush_done.load(std::memory_order_acquire) < ticket; ++i) {
    timespec nap{0, 1000000};
    nanosleep(&nap, nullptr);
  }
  return s.flush_done.load(std::memory_order_acquire) >= ticket;
}

bool before_code_unload(uint64_t begin, uint64_t end) {
  State& s = state();
  if (g_mode.load() != kModeOn) return false;
  {
    MonitorLock lock(s.unload_mu);
    s.unloaded_ranges.emplace_back(begin, end);
  }
  return flush_now();
}

Totals current_totals() {
  State& s = state();
  Totals t;
  t.recorded = s.recorded.load();
  t.buffers = s.buffers_written.load();
  MonitorLock lock(s.core_mu);
  if (s.core) {
    t.written = s.core->events_written();
    t.dropped = s.core->events_lost();
    t.write_errors = s.core->writer().failed() ? 1 : 0;
  }
  return t;
}

// ---------------------------------------------------------------------------
// Fatal signals: ask the writer to write everything, wait (bounded), re-raise.

namespace {

struct sigaction g_previous[32];

void crash_handler(int sig, siginfo_t* info, void* context) {
  State& s = state();
  set_mode(kModeShutdown);
  if (static_cast<pid_t>(syscall(SYS_gettid)) != s.writer_tid && s.writer.joinable()) {
    // This thread's current buffer is published through cur; the writer
    // reads it in drain_partial. Only async-signal-safe calls from here on.
    s.crash_request.store(true, std::memory_order_release);
    s.doorbell.ring();
    timespec nap{0, 1000000};
    for (uint32_t waited = 0; waited < s.config.crash_flush_timeout_ms; ++waited) {
      if (s.crash_done.load(std::memory_order_acquire)) break;
      nanosleep(&nap, nullptr);
    }
  }
  // Restore the previous disposition and re-raise, so the program dies as
  // it would have (core dump, exit status) or its own handler runs.
  struct sigaction& prev = g_previous[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
    return;
  }
  sigaction(sig, &prev, nullptr);
  raise(sig);
}

// ---------------------------------------------------------------------------
// Stop signals (SIGTERM, SIGINT, SIGHUP) whose disposition is the default:
// the process would die without running atexit, so the log would lack its
// END item. The handler asks the writer to write everything and close the
// log (only async-signal-safe calls here), waits for it (bounded), then
// lets the signal take its default effect. A program that installs its own
// handler replaces this one, and its handler's exit() closes the log.

// Asks the writer to write everything and close the log, and waits for it
// (bounded by crash_flush_timeout_ms). Async-signal-safe. `reason`: the
// stop signal, or kImmediateExit.
constexpr int kImmediateExit = -1;

void close_from_any_context(State& s, int reason) {
  const bool on_writer = static_cast<pid_t>(syscall(SYS_gettid)) == s.writer_tid;
  if (on_writer || !s.writer.joinable()) return;
  // A second caller (another thread's _exit, a stop signal during one)
  // waits for the same close: returning at once would let its _exit end
  // the process while the writer is still writing.
  int expected = 0;
  if (s.stop_signal.compare_exchange_strong(expected, reason)) s.doorbell.ring();
  timespec nap{0, 1000000};
  for (uint32_t waited = 0; waited < s.config.crash_flush_timeout_ms; ++waited) {
    if (s.stop_signal_done.load(std::memory_order_acquire)) return;
    nanosleep(&nap, nullptr);
  }
  if (s.stop_signal_done.load(std::memory_order_acquire)) return;
  // Said, not left to the log reader alone (write(2): async-signal-safe).
  static const char kMsg[] =
      "sonde: the log was not closed within crash_flush_timeout_ms; it may be incomplete\n";
  ssize_t ignored = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  (void)ignored;
}

void stop_signal_handler(int sig) {
  close_from_any_context(state(), sig);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // delivered when this handler returns (the signal is blocked in it)
}

}  // namespace

// _exit/_Exit skip atexit, so a forked server's child that ends with them
// left its last buffers unwritten and its log without END. Only the process
// whose writer thread this is: a vfork child shares the parent's memory
// (and its writer), and must not close the parent's log.
void close_before_immediate_exit() {
  State& s = state();
  if (static_cast<pid_t>(syscall(SYS_getpid)) != s.writer_pid.load(std::memory_order_acquire))
    return;
  close_from_any_context(s, kImmediateExit);
}

namespace {

void install_stop_handlers() {
  for (int sig : kStopSignals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = stop_signal_handler;
    sigemptyset(&sa.sa_mask);
    for (int other : kStopSignals) sigaddset(&sa.sa_mask, other);
    sigaction(sig, &sa, nullptr);
  }
}

// The writer's part: what shutdown_monitoring does, from the writer thread
// (the signalled thread may hold any lock). Called without core_mu held.
void close_for_stop_signal(State& s) {
  set_mode(kModeShutdown);
  final_drain(s, /*closing=*/true);
  MonitorLock lock(s.core_mu);
  if (s.core && !s.closed) {
    s.core->close();
    s.closed = true;
    print_summary(s);
    cull_print_summary(names_already_in_log(s));
  }
  s.stop_signal_done.store(true, std::memory_order_release);
}

void install_crash_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = crash_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, &g_previous[sig]);
}

// ---------------------------------------------------------------------------
// fork(): the child either writes its own log or stops monitoring.

// Every libsonde lock an application thread can hold is held across fork,
// so the child never inherits one locked by a thread that does not exist
// there. Taken in the order used everywhere else, or fork deadlocks against
// the writer: restart_mu, core_mu, channels_mu, the registry (the writer
// looks names up under core_mu and channels_mu), patterns_mu (registration
// asks the patterns under the registry's lock), unload_mu.
void lock_all_for_fork(State& s) {
  s.restart_mu.lock();
  s.core_mu.lock();
  s.channels_mu.lock();
  lock_registry_for_fork();
  s.patterns_mu.lock();
  s.unload_mu.lock();
}

void unlock_all_after_fork(State& s) {
  s.unload_mu.unlock();
  s.patterns_mu.unlock();
  unlock_registry_after_fork();
  s.channels_mu.unlock();
  s.core_mu.unlock();
  s.restart_mu.unlock();
}

void on_fork_prepare() { lock_all_for_fork(state()); }

void on_fork_parent() { unlock_all_after_fork(state()); }

void on_fork_child() {
  State& s = state();
  unlock_all_after_fork(s);
  ThreadState& t = t_state;
  // The parent writes everything it recorded; the child forgets it. The
  // forgotten objects stay reachable from here: freeing them could touch
  // state a vanished thread was using, and leak checkers would flag them.
  static std::vector<void*>* abandoned = new std::vector<void*>;
  for (Buffer* b = s.full.take_all(); b != nullptr; b = b->next) abandoned->push_back(b);
  for (ThreadChannel* ch : s.channels) abandoned->push_back(ch);
  new (&s.full) FullStack();
  s.channels.clear();
  // The parent's writer thread does not exist here; its std::thread object
  // is still "joinable", and destroying or assigning it would terminate.
  new (&s.writer) std::thread();
  // Nothing complex runs inside an atfork handler (no destructors, no
  // thread creation: allocator locks may still be held by vanished
  // threads). The child restarts monitoring on its first probe instead.
  abandoned->push_back(s.core.release());
  diagnostics_after_fork_child();
  s.stop.store(false);
  s.stop_signal.store(0);  // a close the parent was making is the parent's
  s.stop_signal_done.store(false);
  s.closed = false;
  s.recorded.store(0);
  s.buffers_written.store(0);
  if (s.config.fork == ForkPolicy::kStop) {
    set_mode(kModeOff);
    t.status = kThreadOff;
    return;
  }
  // Keep this thread's shadow stack (its frames still return), but give it
  // a fresh channel and buffer later, and a trace whose parent is where the
  // fork happened.
  if (t.depth > 0) {
    t.has_parent = 1;
    t.parent_trace_id = t.trace_id - 1;
    t.parent_order_id = static_cast<int32_t>(t.order) - 1;
    t.resume_after_fork = 1;
  }
  t.channel = nullptr;
  t.status = kThreadNew;
  set_no_buffer(t);
  t.trace_id = 0;  // fresh id block: the parent keeps using its own
  s.trace_base ^= (static_cast<uint64_t>(getpid()) << 40) & 0x7fffff0000000000ULL;
  s.next_thread_index = 0;
  s.restart_after_fork.store(true, std::memory_order_release);
  set_mode(kModeUnstarted);
}

}  // namespace

}  // namespace sonde::monitor
