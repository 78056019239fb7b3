// Shared by the interposition probes (interpose_*.cpp): libsonde defines
// library functions (pthread_mutex_lock, sqlite3_step, ...) that the
// dynamic linker binds the program's calls to, measures, and calls the
// real definition found after libsonde (dlsym RTLD_NEXT). docs/probes.md.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <string>

#define SONDE_INTERPOSE extern "C" __attribute__((visibility("default")))

namespace sonde::monitor {

// A definition of `name` in a loaded object that is not in the global
// lookup scope (dlopen'ed RTLD_LOCAL, e.g. a Python extension's
// libsqlite3), other than libsonde's `self`; nullptr if none.
void* definition_in_local_objects(const char* name, void* self);

// Why the program's calls to `symbol` do not reach libsonde's probe ("" if
// they do, or no library defining it is loaded): the library defining it
// comes before libsonde in the lookup order.
std::string binding_problem(const char* symbol);

// The next definition of `name` after libsonde, or, when libsonde comes
// later in the lookup order than the library (dlopen), any definition
// other than `self`. Cached in `slot`; nullptr if none is loaded.
template <typename Fn>
Fn next_definition(std::atomic<Fn>& slot, const char* name, Fn self) {
  Fn f = slot.load(std::memory_order_acquire);
  if (f != nullptr) [[likely]]
    return f;
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr || p == reinterpret_cast<void*>(self)) p = dlsym(RTLD_DEFAULT, name);
  if (p == reinterpret_cast<void*>(self)) p = nullptr;
  if (p == nullptr && self != nullptr) {
    p = definition_in_local_objects(name, reinterpret_cast<void*>(self));
  }
  f = reinterpret_cast<Fn>(p);
  if (f != nullptr) slot.store(f, std::memory_order_release);
  return f;
}

}  // namespace sonde::monitor
