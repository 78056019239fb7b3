// Event buffers and the lock-free hand-off between probes and the writer.
//
// Each thread owns up to `buffers_per_thread` buffers. It fills one, pushes
// it onto the global full-buffer stack (one CAS per buffer, never per event)
// and takes the next from its own return ring, which only the writer fills:
// single producer, single consumer, so no locks and no ABA. Buffers of
// exited threads go to a recycled pool that new threads draw from.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "monitor/raw_event.hpp"

namespace sonde::monitor {

struct ThreadChannel;

struct Buffer {
  Buffer* next = nullptr;  // link in the full stack / recycled pool
  ThreadChannel* channel = nullptr;
  RawEvent* events = nullptr;  // capacity() events, pre-faulted
  size_t capacity = 0;
  size_t used = 0;     // set at hand-off
  bool final = false;  // the thread exited after this buffer
};

// Allocates a buffer with its pages touched so that probes never page-fault
// on it. Returns nullptr when memory is exhausted.
Buffer* allocate_buffer(size_t capacity_events);
void free_buffer(Buffer* b);

// Bounded single-producer single-consumer ring of buffer pointers.
class ReturnRing {
 public:
  static constexpr size_t kCapacity = 64;
  bool push(Buffer* b) {  // writer side
    size_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_.load(std::memory_order_acquire) == kCapacity) return false;
    slots_[h % kCapacity] = b;
    head_.store(h + 1, std::memory_order_release);
    // A thread blocked for a buffer (block policy) sleeps on pushes_: wake
    // it now rather than let it oversleep. Sequentially consistent with
    // wait_for_push, so that either the thread sees this push before it
    // sleeps or this sees the thread waiting; the system call is only made
    // for a thread that is waiting anyway.
    pushes_.fetch_add(1, std::memory_order_seq_cst);
    if (waiting_.load(std::memory_order_seq_cst) != 0) wake();
    return true;
  }
  Buffer* pop() {  // owning thread side
    size_t t = tail_.load(std::memory_order_relaxed);
    if (t == head_.load(std::memory_order_acquire)) return nullptr;
    Buffer* b = slots_[t % kCapacity];
    tail_.store(t + 1, std::memory_order_release);
    return b;
  }
  // Owning thread side: sleeps until the writer pushes or `timeout_ns`
  // passes (futex; spurious returns are possible, callers loop).
  void wait_for_push(uint64_t timeout_ns);

 private:
  void wake();
  alignas(64) std::atomic<size_t> head_{0};
  std::atomic<uint32_t> pushes_{0};  // the futex word; changes on every push
  alignas(64) std::atomic<size_t> tail_{0};
  std::atomic<uint32_t> waiting_{0};  // the owner sleeps in wait_for_push
  Buffer* slots_[kCapacity] = {};
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);

// Wakes the idle writer thread. The writer sleeps on a futex rather than
// polling, because each wake-up of a polling writer evicts the probes' cache
// lines on a small machine (measured: 35 instead of 24 ns per monitored call
// at 500 us between calls with a 200 us poll; docs/PERFORMANCE.md). Whoever
// gives the writer work (a full buffer, a flush, a crash, shutdown) rings
// after publishing it; the system call is only made while the writer sleeps.
class WriterDoorbell {
 public:
  // Writer side: returns the ticket to pass to sleep(); check for work after
  // this call, so that work published before a ring is never slept through.
  uint32_t arm() {
    sleeping_.store(1, std::memory_order_seq_cst);
    return rings_.load(std::memory_order_seq_cst);
  }
  // Writer side: found work after arm(), so it will not sleep.
  void disarm() { sleeping_.store(0, std::memory_order_relaxed); }
  // Writer side: sleeps until a ring after arm() or `timeout_ns` passes.
  void sleep(uint32_t ticket, uint64_t timeout_ns);
  // Any thread, async-signal-safe.
  void ring() {
    rings_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst) != 0) wake();
  }

 private:
  void wake();
  std::atomic<uint32_t> rings_{0};  // the futex word
  std::atomic<uint32_t> sleeping_{0};
};

// Multi-producer stack of full buffers; the writer takes all at once and
// restores FIFO order, which keeps each thread's buffers in sequence.
class FullStack {
 public:
  void push(Buffer* b) {
    Buffer* head = head_.load(std::memory_order_relaxed);
    do {
      b->next = head;
    } while (!head_.compare_exchange_weak(head, b, std::memory_order_release,
                                          std::memory_order_relaxed));
  }
  // Returns the buffers pushed so far, oldest first.
  Buffer* take_all() {
    Buffer* b = head_.exchange(nullptr, std::memory_order_acquire);
    Buffer* reversed = nullptr;
    while (b != nullptr) {
      Buffer* next = b->next;
      b->next = reversed;
      reversed = b;
      b = next;
    }
    return reversed;
  }
  bool empty() const { return head_.load(std::memory_order_relaxed) == nullptr; }

 private:
  std::atomic<Buffer*> head_{nullptr};
};

}  // namespace sonde::monitor
