#include "monitor/buffer.hpp"

#include <sys/mman.h>

#include <new>

namespace sonde::monitor {

Buffer* allocate_buffer(size_t capacity_events) {
  size_t bytes = capacity_events * sizeof(RawEvent);
  // MAP_POPULATE faults every page in now: a first-touch fault costs about as
  // much as 500 events on a VM, and it must not happen inside a probe.
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* b = new (std::nothrow) Buffer;
  if (b == nullptr) {
    munmap(mem, bytes);
    return nullptr;
  }
  b->events = static_cast<RawEvent*>(mem);
  b->capacity = capacity_events;
  return b;
}

void free_buffer(Buffer* b) {
  if (b == nullptr) return;
  munmap(b->events, b->capacity * sizeof(RawEvent));
  delete b;
}

}  // namespace sonde::monitor
