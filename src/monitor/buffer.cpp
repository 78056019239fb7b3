#include "monitor/buffer.hpp"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <new>

namespace sonde::monitor {

namespace {

// The Buffer header sits at the start of its own mapping, the events after
// it (at a cache-line boundary): one mmap and no operator new, so that a
// probe in a signal handler that needs a fresh buffer calls nothing that is
// unsafe in a signal handler (malloc may be what the signal interrupted).
constexpr size_t kHeaderBytes = (sizeof(Buffer) + 63) / 64 * 64;

size_t mapping_bytes(size_t capacity_events) {
  return kHeaderBytes + capacity_events * sizeof(RawEvent);
}

}  // namespace

Buffer* allocate_buffer(size_t capacity_events) {
  const size_t bytes = mapping_bytes(capacity_events);
  // MAP_POPULATE faults every page in now: a first-touch fault costs about as
  // much as 500 events on a VM, and it must not happen inside a probe.
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* b = new (mem) Buffer;
  b->events = reinterpret_cast<RawEvent*>(static_cast<char*>(mem) + kHeaderBytes);
  b->capacity = capacity_events;
  return b;
}

namespace {

// Sleeps while `*word == expected`, at most `timeout_ns`; returns at once if
// the word has already changed (so a change before the call is not missed).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) {
  timespec timeout{static_cast<time_t>(timeout_ns / 1000000000),
                   static_cast<long>(timeout_ns % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &timeout,
          nullptr, 0);
}

void futex_wake_one(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

}  // namespace

void ReturnRing::wait_for_push(uint64_t timeout_ns) {
  waiting_.store(1, std::memory_order_seq_cst);
  const uint32_t seen = pushes_.load(std::memory_order_seq_cst);
  if (tail_.load(std::memory_order_relaxed) == head_.load(std::memory_order_acquire)) {
    futex_wait(pushes_, seen, timeout_ns);  // at once if a push came since `seen`
  }
  waiting_.store(0, std::memory_order_relaxed);
}

void ReturnRing::wake() { futex_wake_one(pushes_); }

void WriterDoorbell::sleep(uint32_t ticket, uint64_t timeout_ns) {
  futex_wait(rings_, ticket, timeout_ns);  // at once if rung since arm()
  sleeping_.store(0, std::memory_order_relaxed);
}

void WriterDoorbell::wake() { futex_wake_one(rings_); }

void free_buffer(Buffer* b) {
  if (b == nullptr) return;
  const size_t bytes = mapping_bytes(b->capacity);
  b->~Buffer();
  munmap(b, bytes);
}

}  // namespace sonde::monitor
