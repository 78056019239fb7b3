#include "monitor/preload_check.hpp"

#include <dlfcn.h>

#include "monitor/preload_abi.hpp"

namespace sonde::monitor {
namespace {

void* preload_marker() { return dlsym(RTLD_DEFAULT, "sonde_internal_preload_marker"); }

}  // namespace

bool preload_loaded() { return preload_marker() != nullptr; }

std::string preload_binding_problem(const char* symbol) {
  void* bound = dlsym(RTLD_DEFAULT, symbol);
  if (bound == nullptr) return "";  // the library is not loaded (yet)
  void* marker = preload_marker();
  if (marker == nullptr) {
    return std::string("libsonde-preload.so, which holds the probe of ") + symbol +
           ", is not loaded: LD_PRELOAD it or link it (sonde run preloads it); the "
           "program's calls will not be recorded";
  }
  // Compare modules: the preload library's definition would go through
  // the same lookup.
  Dl_info preload{}, info{};
  if (dladdr(marker, &preload) == 0 || dladdr(bound, &info) == 0 ||
      info.dli_fbase == preload.dli_fbase) {
    return "";
  }
  const char* where = info.dli_fname != nullptr ? info.dli_fname : "?";
  return std::string("the program's ") + symbol + " binds to " + where +
         ", not to libsonde-preload: link libsonde-preload before that library or LD_PRELOAD "
         "it; its calls will not be recorded";
}

}  // namespace sonde::monitor
