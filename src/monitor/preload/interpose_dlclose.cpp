// dlclose() interposed: before a library's code is unmapped, libsonde's
// writer resolves every address recorded so far (names of static functions
// come from the library's own symbol table, which is gone afterwards), and
// forgets that address range, so a library loaded at the same address later
// gets its own names instead of the unloaded one's.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdint>

#include "monitor/preload/interpose_common.hpp"

namespace {

using DlcloseFn = int (*)(void*);

struct Range {
  uintptr_t base = 0;
  uint64_t begin = UINT64_MAX;
  uint64_t end = 0;
};

// The executable segments of the object loaded at `base`.
int find_segments(dl_phdr_info* info, size_t, void* data) {
  auto* r = static_cast<Range*>(data);
  if (info->dlpi_addr != r->base) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    r->begin = std::min<uint64_t>(r->begin, lo);
    r->end = std::max<uint64_t>(r->end, lo + ph.p_memsz);
  }
  return 1;
}

thread_local bool t_in_dlclose = false;

}  // namespace

SONDE_INTERPOSE int dlclose(void* handle) {
  static DlcloseFn real = reinterpret_cast<DlcloseFn>(dlsym(RTLD_NEXT, "dlclose"));
  if (real == nullptr) return -1;
  link_map* map = nullptr;
  if (!t_in_dlclose && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
      map->l_addr != 0) {
    t_in_dlclose = true;  // elfutils may dlclose too while the writer resolves
    Range r;
    r.base = map->l_addr;
    dl_iterate_phdr(find_segments, &r);
    if (r.begin < r.end) sonde_internal_before_code_unload(r.begin, r.end);
    t_in_dlclose = false;
  }
  return real(handle);
}
