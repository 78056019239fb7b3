// Per-thread probe state. Plain data with zero initialisation so that the
// thread_local needs no constructor call on access; the first probe on a
// thread takes the slow path (activate_thread) which sets it up.
#pragma once

#include <atomic>
#include <cstdint>

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

enum ThreadStatus : uint8_t { kThreadNew = 0, kThreadActive = 1, kThreadOff = 2 };

struct ThreadChannel;

struct ThreadState {
  std::atomic<RawEvent*> cur;  // next free slot; published to the writer with release
  RawEvent* limit;             // last slot usable for a new enter
  Buffer* buffer;
  uint64_t* shadow;            // keys of open frames
  uint32_t depth;
  uint32_t shadow_capacity;
  uint32_t order;              // next order index in the current trace
  uint8_t status;
  uint8_t has_parent;
  uint64_t trace_id;
  uint64_t pending_lost;       // events dropped and not yet marked in the stream
  uint64_t parent_trace_id;
  int32_t parent_order_id;
  ThreadChannel* channel;
};

extern thread_local ThreadState t_state [[gnu::tls_model("initial-exec")]];

// Global probe mode: one byte read by every probe.
enum Mode : uint8_t { kModeOff = 0, kModeOn = 1, kModeShutdown = 2 };
extern std::atomic<uint8_t> g_mode;

// Slow paths (controller.cpp).
bool activate_thread(ThreadState& t);      // false: this thread is not monitored
RawEvent* next_buffer(ThreadState& t);     // hands off the full buffer; nullptr: dropped
bool grow_shadow(ThreadState& t);
RawEvent* begin_trace(ThreadState& t, RawEvent* p);
RawEvent* mark_lost(ThreadState& t, RawEvent* p, uint64_t now);

}  // namespace sonde::monitor
