// Code memory for call-site patching (callsite_patch.cpp): the loaded
// objects' segments as dl_iterate_phdr shows them, atomic stores into code,
// code made writable one segment at a time, and pages holding a `ret`
// within a call's reach.
#pragma once

#include <link.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "monitor/callsite_code.hpp"
#include "monitor/hook_argument.hpp"

namespace sonde::monitor::callsite {

struct Segment {
  uint64_t begin, end;  // page-rounded: what is mapped
  uint32_t flags;
};

// One loaded object's segments, visited while dl_iterate_phdr holds the
// loader's lock: no dlclose can unmap them under us.
struct ObjectView {
  const char* name;
  uint64_t base;
  std::vector<Segment> segments;
  uint64_t relro_begin = 0, relro_end = 0;  // PT_GNU_RELRO: read-only once relocated

  // Whether the 8 bytes at `address` can no longer change: in a segment
  // mapped without write access, or in the part made read-only after
  // relocation (the GOT's address slots).
  bool constant_slot(uint64_t address) const {
    if (address >= relro_begin && address + 8 <= relro_end) return true;
    const Segment* s = segment_of(address, address + 8);
    return s != nullptr && (s->flags & PF_W) == 0;
  }
  // Reads such a slot for the hook-argument analysis (a function of another
  // object reaches the hooks as a value loaded from its GOT slot).
  ConstantSlot slot_reader() const {
    return [this](uint64_t slot, uint64_t* value) {
      if (!constant_slot(slot)) return false;
      *value = __atomic_load_n(reinterpret_cast<const uint64_t*>(slot), __ATOMIC_RELAXED);
      return true;
    };
  }

  const Segment* segment_of(uint64_t begin, uint64_t end) const {
    for (const Segment& s : segments) {
      if (begin >= s.begin && end <= s.end) return &s;
    }
    return nullptr;
  }
  // Code is only touched where exactly one executable segment maps it.
  const Segment* code_of(uint64_t begin, uint64_t end) const {
    const Segment* found = nullptr;
    for (const Segment& s : segments) {
      if (end <= s.begin || begin >= s.end) continue;
      if (found != nullptr || (s.flags & PF_X) == 0 || begin < s.begin || end > s.end) {
        return nullptr;
      }
      found = &s;
    }
    return found;
  }
};

// The view of one object, its segments rounded to `page`.
ObjectView view_of(const dl_phdr_info* info, uint64_t page);

// Writes `count` bytes of `bytes` at `start` with the one atomic store of
// `kind` (callsite_code.hpp). The page must be writable.
bool store(StoreKind kind, uint64_t start, const uint8_t* bytes, uint32_t count);

// Code made writable for patching: one executable segment at a time, kept
// writable until the pass over its object ends (close_window). Each
// mprotect of code makes the kernel flush every core's TLB; one per page
// patched cost the writer a quarter of its time in a leveldb run culled
// from the start (2,547 sites) and interrupted the program's core with
// each flush. The segment stays executable throughout.
struct WritableWindow {
  uint64_t begin = 0, end = 0;  // 0, 0: nothing open
  uint32_t flags = 0;
};

// Makes the bytes at `address` (in `seg`) writable, keeping them so until
// close_window: the whole segment if the system allows, else just the page
// of `address`. (Making a private mapping writable charges it against the
// commit limit: with strict overcommit or a low RLIMIT_DATA a large segment
// may be refused where one page is not.) False, with errno set, if even the
// page is refused.
bool open_writable(WritableWindow& win, long page_size, const Segment& seg, uint64_t address);
void close_window(WritableWindow& win);

// Pages holding a `ret`, by object name and base; 0: none could be placed.
using RetPages = std::map<std::pair<std::string, uint64_t>, uint64_t>;

// The address of a `ret` that every call in `obj`'s code can reach with a
// rel32, on a page of its own mapped next to the object (below it, else
// above it, each time a little further away); 0 if none could be placed.
// A redirected call (StoreKind::kRedirect) goes there and comes straight
// back, which costs about what a NOP costs.
uint64_t ret_near(RetPages& pages, long page_size, const ObjectView& obj);

}  // namespace sonde::monitor::callsite
