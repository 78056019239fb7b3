#include "monitor/interpose_common.hpp"

#include <link.h>

#include <string>
#include <vector>

namespace sonde::monitor {
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
    if (dladdr(p, &where) != 0 && where.dli_fbase == mine.dli_fbase) continue;  // libsonde's own
    return p;
  }
  return nullptr;
}

std::string binding_problem(const char* symbol) {
  void* bound = dlsym(RTLD_DEFAULT, symbol);
  if (bound == nullptr) return "";  // the library is not loaded (yet)
  // Compare modules: the address of libsonde's own definition would go
  // through the same lookup.
  Dl_info mine{}, info{};
  if (dladdr(reinterpret_cast<void*>(&binding_problem), &mine) == 0 || dladdr(bound, &info) == 0 ||
      info.dli_fbase == mine.dli_fbase) {
    return "";
  }
  const char* where = info.dli_fname != nullptr ? info.dli_fname : "?";
  return std::string("the program's ") + symbol + " binds to " + where +
         ", not to libsonde: link libsonde before that library or LD_PRELOAD it; "
         "its calls will not be recorded";
}

}  // namespace sonde::monitor
