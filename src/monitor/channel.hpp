// A monitored thread as the writer sees it. Created when the thread's first
// probe runs; the writer frees it after the thread's final buffer.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

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
  bool announced = false;
};

}  // namespace sonde::monitor
