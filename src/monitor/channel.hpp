// A monitored thread as the writer sees it. Created when the thread's first
// probe runs; the writer frees it after the thread's final buffer.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "monitor/buffer.hpp"
#include "monitor/thread_state.hpp"

namespace sonde::monitor {

struct ThreadChannel {
  uint32_t index = 0;
  uint64_t os_tid = 0;
  std::string name;
  ThreadState* state = nullptr;           // the live thread's state; null once it exited
  ReturnRing returns;                     // writer → thread
  uint32_t buffers_owned = 0;             // thread side
  std::atomic<Buffer*> current{nullptr};  // the buffer being filled, for partial flushes
  std::atomic<uint64_t> handed_off{0};    // buffers pushed by the thread
  std::atomic<bool> exited{false};
  // Set by the thread's exit handler before its final hand-off, with the
  // events its last buffer holds then: the closing writer waits for that
  // hand-off (it may come after the final drains) and, if it never
  // arrives, reports those events as lost.
  std::atomic<bool> ending{false};
  Buffer* ending_buffer = nullptr;
  size_t ending_used = 0;
  // Writer side.
  uint64_t processed = 0;            // buffers the writer has consumed
  Buffer* partial_buffer = nullptr;  // buffer whose prefix was already written
  size_t partial_done = 0;
};

// The events a live thread has put into its current buffer so far, when
// every earlier buffer of the thread has reached the writer (so they come
// right after those): {buffer, count}; {nullptr, 0} otherwise. Writer side;
// the thread goes on filling the buffer beyond the count meanwhile.
inline std::pair<Buffer*, size_t> filled_part(ThreadChannel& ch) {
  if (ch.exited.load(std::memory_order_acquire) || ch.state == nullptr) return {nullptr, 0};
  RawEvent* cur = ch.state->cur.load(std::memory_order_acquire);
  Buffer* b = ch.current.load(std::memory_order_acquire);
  if (b == nullptr || ch.handed_off.load(std::memory_order_acquire) != ch.processed)
    return {nullptr, 0};
  if (cur < b->events || cur > b->events + b->capacity) return {nullptr, 0};
  return {b, static_cast<size_t>(cur - b->events)};
}

}  // namespace sonde::monitor
