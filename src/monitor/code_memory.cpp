#include "monitor/code_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sonde::monitor::callsite {
namespace {

int protection(uint32_t flags) {
  return ((flags & PF_R) ? PROT_READ : 0) | ((flags & PF_W) ? PROT_WRITE : 0) |
         ((flags & PF_X) ? PROT_EXEC : 0);
}

struct alignas(16) Block16 {
  uint64_t lo, hi;
};

bool cas16(uint64_t* block, const uint8_t expected[16], const uint8_t desired[16]) {
  uint64_t e[2], d[2];
  std::memcpy(e, expected, 16);
  std::memcpy(d, desired, 16);
  bool ok;
  asm volatile("lock cmpxchg16b %1"
               : "=@ccz"(ok), "+m"(*reinterpret_cast<Block16*>(block)), "+a"(e[0]), "+d"(e[1])
               : "b"(d[0]), "c"(d[1])
               : "memory");
  return ok;
}

// An 8-byte compare-and-swap on code, in assembly as cas16: ThreadSanitizer
// would otherwise instrument it, and it keeps no shadow for code pages
// (its runtime crashed on the store when the test programs ran under TSan).
bool cas8(uint64_t* word, uint64_t expected, uint64_t desired) {
  bool ok;
  asm volatile("lock cmpxchgq %3, %1"
               : "=@ccz"(ok), "+m"(*word), "+a"(expected)
               : "r"(desired)
               : "memory");
  return ok;
}

}  // namespace

ObjectView view_of(const dl_phdr_info* info, uint64_t page) {
  ObjectView obj{info->dlpi_name != nullptr ? info->dlpi_name : "", info->dlpi_addr, {}};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_RELRO) {
      obj.relro_begin = info->dlpi_addr + ph.p_vaddr;
      obj.relro_end = obj.relro_begin + ph.p_memsz;
    }
    if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
    uint64_t begin = info->dlpi_addr + ph.p_vaddr;
    uint64_t end = begin + ph.p_memsz;
    obj.segments.push_back({begin & ~(page - 1), (end + page - 1) & ~(page - 1), ph.p_flags});
  }
  return obj;
}

bool store(StoreKind kind, uint64_t start, const uint8_t* bytes, uint32_t count) {
  // A redirected call keeps its opcode: only the rel32 after it is stored.
  if (kind == StoreKind::kRedirect) return store(StoreKind::kCas8, start + 1, bytes + 1, count - 1);
  const uint64_t block = store_block(kind, start);
  const uint32_t size = store_size(kind);
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint8_t current[16], desired[16];
    std::memcpy(current, reinterpret_cast<const void*>(block), size);
    overlay(current, block, size, start, bytes, count, desired);
    if (size == 8) {
      uint64_t e, d;
      std::memcpy(&e, current, 8);
      std::memcpy(&d, desired, 8);
      if (cas8(reinterpret_cast<uint64_t*>(block), e, d)) return true;
    } else if (cas16(reinterpret_cast<uint64_t*>(block), current, desired)) {
      return true;
    }
  }
  return false;
}

bool open_writable(WritableWindow& win, long page_size, const Segment& seg, uint64_t address) {
  if (address >= win.begin && address < win.end && win.flags == seg.flags) return true;
  close_window(win);
  constexpr int kRwx = PROT_READ | PROT_WRITE | PROT_EXEC;
  const uint64_t page = address & ~static_cast<uint64_t>(page_size - 1);
  if (mprotect(reinterpret_cast<void*>(seg.begin), seg.end - seg.begin, kRwx) == 0) {
    win = {seg.begin, seg.end, seg.flags};
    return true;
  }
  if (mprotect(reinterpret_cast<void*>(page), static_cast<size_t>(page_size), kRwx) == 0) {
    win = {page, page + static_cast<uint64_t>(page_size), seg.flags};
    return true;
  }
  return false;
}

void close_window(WritableWindow& win) {
  if (win.end == 0) return;
  mprotect(reinterpret_cast<void*>(win.begin), win.end - win.begin, protection(win.flags));
  win = {};
}

uint64_t ret_near(RetPages& pages, long page_size, const ObjectView& obj) {
  auto [it, fresh] = pages.try_emplace({obj.name, obj.base}, 0);
  if (!fresh || obj.segments.empty()) return it->second;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Segment& s : obj.segments) {
    lo = std::min(lo, s.begin);
    hi = std::max(hi, s.end);
  }
  constexpr uint64_t kReach = (uint64_t{1} << 31) - 64;
  const auto page = static_cast<uint64_t>(page_size);
  for (uint64_t mib = 1; mib <= 1024; mib *= 2) {
    for (uint64_t hint : {lo - (mib << 20), hi + (mib << 20)}) {
      if (hint > lo && hint < hi) continue;  // wrapped around
      void* p = mmap(reinterpret_cast<void*>(hint & ~(page - 1)), page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == MAP_FAILED) continue;
      const auto at = reinterpret_cast<uint64_t>(p);
      const bool reach = at + page <= lo ? hi - at <= kReach : at >= hi && at + page - lo <= kReach;
      std::memset(p, 0xcc, page);  // int3 around the one instruction
      *static_cast<uint8_t*>(p) = 0xc3;
      if (reach && mprotect(p, page, PROT_READ | PROT_EXEC) == 0) return it->second = at;
      munmap(p, page);
    }
  }
  return 0;
}

}  // namespace sonde::monitor::callsite
