#include "monitor/preload/interpose_common.hpp"

#include <link.h>

#include <string>
#include <vector>

namespace sonde::preload {
namespace {

int collect_names(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
  }
  return 0;
}

}  // namespace

void* definition_in_local_objects(const char* name, void* self) {
  Dl_info mine{};
  if (dladdr(reinterpret_cast<void*>(&definition_in_local_objects), &mine) == 0) return nullptr;
  std::vector<std::string> objects;
  dl_iterate_phdr(collect_names, &objects);
  for (const std::string& object : objects) {
    // RTLD_NOLOAD: only a handle to what is already loaded, never a new load.
    void* handle = dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* p = dlsym(handle, name);
    dlclose(handle);
    if (p == nullptr || p == self) continue;
    Dl_info where{};
    if (dladdr(p, &where) != 0 && where.dli_fbase == mine.dli_fbase) continue;  // our own
    return p;
  }
  return nullptr;
}

}  // namespace sonde::preload

// libsonde looks this up to tell whether the probes are in place.
extern "C" SONDE_INTERNAL int sonde_internal_preload_marker(void) { return 1; }
