// Per-thread probe state. Plain data with zero initialisation so that the
// thread_local needs no constructor call on access; the first probe on a
// thread takes the slow path (activate_thread) which sets it up.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "monitor/buffer.hpp"
#include "monitor/raw_event.hpp"

namespace sonde::monitor {

// Shadow stack keys: function address, or operation id tagged with kOpTag.
// kDroppedTag marks a frame whose enter event was dropped, so its exit is
// counted as dropped too and every probe call accounts for two events.
inline constexpr uint64_t kOpTag = uint64_t{1} << 62;
inline constexpr uint64_t kDroppedTag = uint64_t{1} << 63;

// Room kept free at the end of each buffer for the events a single enter
// may write after its one bounds check (lost marker, trace begin, trace
// parent, three W3C fields, enter; a failed exit writes two).
inline constexpr size_t kBufferSlack = 7;

// kThreadResync: active, but a longjmp left this thread's stack, or a
// signal handler's probe counted a loss; the next enter goes through the
// slow path, which pops the frames jumped over and takes the count over.
enum ThreadStatus : uint8_t {
  kThreadNew = 0,
  kThreadActive = 1,
  kThreadOff = 2,
  kThreadResync = 3,
  kThreadInProbe = 4  // a probe of this thread is running (probe_path.hpp)
};

struct ThreadChannel;

// The write cursor, published to the writer thread. A plain field with
// atomic builtins rather than std::atomic: that keeps ThreadState trivially
// constructible, so the thread_local needs no per-access init-guard call.
struct PublishedCursor {
  RawEvent* value;
  RawEvent* load(std::memory_order order) const {
    return __atomic_load_n(&value, static_cast<int>(order));
  }
  void store(RawEvent* p, std::memory_order order) {
    __atomic_store_n(&value, p, static_cast<int>(order));
  }
};

// One open frame: its key, and the stack pointer of the function that
// entered it (the caller's stack pointer at the probe call). A frame's
// descendants always have a lower one; a probe that finds a higher one than
// the top frame's knows the top frame was left without its exit (longjmp).
struct ShadowFrame {
  uint64_t key;
  uint64_t sp;  // 0: not comparable (manual scope, or off this thread's stack)
};

struct ThreadState {
  PublishedCursor cur;  // next free slot; published to the writer with release
  RawEvent* limit;      // last slot usable for a new enter
  Buffer* buffer;
  ShadowFrame* shadow;  // open frames (mmap'ed: grown without malloc, signal-safe)
  uint32_t depth;
  uint32_t shadow_capacity;
  uint32_t order;  // next order index in the current trace
  // Set for the length of every probe; a probe in a signal handler that
  // finds it set interrupted a probe of this thread: it only counts itself.
  uint8_t in_probe;
  uint8_t status;
  uint8_t has_parent;
  uint8_t resume_after_fork;  // forking thread in a child: begin a trace on activation
  uint64_t trace_id;
  uint64_t pending_lost;  // events dropped and not yet marked in the stream
  uint64_t parent_trace_id;
  int32_t parent_order_id;
  // Here, in parent_order_id's padding, so that the fields above (up to
  // pending_lost, which every probe reads) stay in the first cache line.
  uint8_t continued;       // the current trace continued a context (it owns no W3C trace)
  uint8_t parent_is_w3c;   // the next trace continues a W3C trace sonde did not start
  uint8_t order_diverged;  // `order` no longer matches the log's order indexes (after a fork)
  // The W3C trace (sonde did not start it) that the next trace continues,
  // and the caller's span id; and that of the current trace (0/0: none,
  // the trace is sonde's own).
  uint64_t parent_w3c_high, parent_w3c_low, parent_span_id;
  uint64_t w3c_high, w3c_low;
  uint64_t throws;  // exceptions thrown on this thread (exceptions.cpp)
  ThreadChannel* channel;
  uint64_t stack_lo, stack_hi;  // this thread's stack, for stack-pointer comparisons
  // Health counters, summed into the log's MonitorHealthRecord and the
  // exit summary. signal_lost is only changed by probes that interrupted a
  // probe (atomically: a handler may interrupt a handler).
  uint64_t unwound_frames;     // frames closed because they were left without an exit
  uint64_t unmatched_exits;    // exits that matched no open frame (ignored)
  uint64_t signal_lost;        // events of probes inside a signal handler that interrupted a probe
  uint64_t signal_lost_total;  // the same, never reset (for the health record)
};
static_assert(std::is_trivially_default_constructible_v<ThreadState>);
static_assert(offsetof(ThreadState, pending_lost) + sizeof(uint64_t) <= 64,
              "the probe path's fields share the first cache line");

// Shadow-stack updates by the owning thread. Relaxed atomic stores are
// plain moves on x86; they keep a reader on another thread well-defined
// (none reads the frames today: the log is closed from the written stream).
inline void push_frame(ThreadState& t, uint64_t key, uint64_t sp) {
  ShadowFrame* f = t.shadow + t.depth;
  __atomic_store_n(&f->key, key, __ATOMIC_RELAXED);
  __atomic_store_n(&f->sp, sp, __ATOMIC_RELAXED);
  __atomic_store_n(&t.depth, t.depth + 1, __ATOMIC_RELAXED);
}
inline ShadowFrame pop_frame(ThreadState& t) {
  __atomic_store_n(&t.depth, t.depth - 1, __ATOMIC_RELAXED);
  return t.shadow[t.depth];
}

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// Global probe mode: one byte read by every probe. kModeUnstarted sends the
// first probe through start-up; afterwards an "off" probe returns at once.
enum Mode : uint8_t { kModeOff = 0, kModeOn = 1, kModeShutdown = 2, kModeUnstarted = 3 };
extern std::atomic<uint8_t> g_mode;
// Sets g_mode and the inline gate that C++ scopes check (sonde_probe_gate).
void set_mode(uint8_t mode);

// Slow paths (controller.cpp). Called with the status at kThreadInProbe.
enum class Activation { kActive, kNotNow, kNever };
Activation activate_thread(ThreadState& t);  // sets up channel, shadow stack and buffer
RawEvent* next_buffer(ThreadState& t);       // hands off the full buffer; nullptr: dropped
bool grow_shadow(ThreadState& t);            // false: the call is dropped (counted)
void free_shadow(ThreadState& t);
RawEvent* begin_trace(ThreadState& t, RawEvent* p);
RawEvent* mark_lost(ThreadState& t, RawEvent* p, uint64_t now);

// trace_start (probe_slow.cpp): whether an outermost call of the function at
// `address` starts a trace. Without trace_start every outermost call does.
bool starts_trace(uint64_t address);
// Builds the trace_start table from the config's globs (at start-up).
void load_trace_start(std::string_view globs);
// The cause id recorded for frames closed because they were left without an
// exit (interned at start-up, so the probe never takes the registry lock).
void set_unwound_cause(uint32_t cause);

}  // namespace sonde::monitor
