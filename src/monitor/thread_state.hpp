// Per-thread probe state. Plain data with zero initialisation so that the
// thread_local needs no constructor call on access; the first probe on a
// thread takes the slow path (activate_thread) which sets it up.
#pragma once

#include <atomic>
#include <cstdint>
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
// parent, enter; a failed exit writes two).
inline constexpr size_t kBufferSlack = 4;

// kThreadResync: active, but a longjmp left this thread's stack; the next
// enter goes through the slow path, which pops the frames jumped over.
enum ThreadStatus : uint8_t {
  kThreadNew = 0,
  kThreadActive = 1,
  kThreadOff = 2,
  kThreadResync = 3
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

struct ThreadState {
  PublishedCursor cur;  // next free slot; published to the writer with release
  RawEvent* limit;      // last slot usable for a new enter
  Buffer* buffer;
  uint64_t* shadow;  // keys of open frames
  uint32_t depth;
  uint32_t shadow_capacity;
  uint32_t order;  // next order index in the current trace
  uint8_t status;
  uint8_t has_parent;
  uint8_t resume_after_fork;  // forking thread in a child: begin a trace on activation
  uint64_t trace_id;
  uint64_t pending_lost;  // events dropped and not yet marked in the stream
  uint64_t parent_trace_id;
  int32_t parent_order_id;
  uint64_t throws;  // exceptions thrown on this thread (exceptions.cpp)
  ThreadChannel* channel;
};
static_assert(std::is_trivially_default_constructible_v<ThreadState>);

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// Global probe mode: one byte read by every probe. kModeUnstarted sends the
// first probe through start-up; afterwards an "off" probe returns at once.
enum Mode : uint8_t { kModeOff = 0, kModeOn = 1, kModeShutdown = 2, kModeUnstarted = 3 };
extern std::atomic<uint8_t> g_mode;
// Sets g_mode and the inline gate that C++ scopes check (sonde_probe_gate).
void set_mode(uint8_t mode);

// Slow paths (controller.cpp).
bool activate_thread(ThreadState& t);   // false: this thread is not monitored
RawEvent* next_buffer(ThreadState& t);  // hands off the full buffer; nullptr: dropped
bool grow_shadow(ThreadState& t);
RawEvent* begin_trace(ThreadState& t, RawEvent* p);
RawEvent* mark_lost(ThreadState& t, RawEvent* p, uint64_t now);

}  // namespace sonde::monitor
