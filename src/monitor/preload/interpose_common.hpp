// Shared by the interposers of libsonde-preload (interpose_*.cpp): the
// library defines library functions (pthread_mutex_lock, sqlite3_step, ...)
// that the dynamic linker binds the program's calls to, measures, and calls
// the real definition found after it (dlsym RTLD_NEXT). What they record
// goes to libsonde through its internal ABI (monitor/preload_abi.hpp).
// docs/probes.md.
#pragma once

#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "monitor/preload_abi.hpp"
#include "monitor/probe_busy.hpp"

#define SONDE_INTERPOSE extern "C" __attribute__((visibility("default")))

namespace sonde::preload {

using monitor::DiagnosticKind;
using monitor::DiagnosticRecord;
using monitor::g_probe_switches;
using monitor::ProbeBusy;
using monitor::t_probe_busy;
using monitor::TracePosition;

// A definition of `name` in a loaded object that is not in the global
// lookup scope (dlopen'ed RTLD_LOCAL, e.g. a Python extension's
// libsqlite3), other than this library's `self`; nullptr if none.
void* definition_in_local_objects(const char* name, void* self);

// The next definition of `name` after this library, or, when it comes
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

// The real definitions of N functions interposers call where dlsym must not
// run (signal handlers leave through siglongjmp and _exit): resolved when
// the library is loaded (resolve_all, from a constructor), or by get()
// with dlsym if called before that (from another library's constructor,
// where dlsym is safe). Constant-initialised, so usable before any
// constructor.
template <typename Fn, size_t N>
class LoadTimeFunctions {
 public:
  explicit constexpr LoadTimeFunctions(const char* const (&names)[N]) : names_(names) {}

  Fn get(size_t which) {
    Fn f = real_[which].load(std::memory_order_acquire);
    if (f == nullptr) {
      f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, names_[which]));
      real_[which].store(f, std::memory_order_release);
    }
    return f;
  }
  void resolve_all() {
    for (size_t i = 0; i < N; ++i) get(i);
  }

 private:
  const char* const (&names_)[N];
  std::atomic<Fn> real_[N]{};
};

// libsonde's side, under the names the interposers used inside libsonde.
inline bool diagnostics_accepting() { return sonde_internal_diagnostics_accepting(); }
inline void emit_diagnostic(DiagnosticRecord& r) { sonde_internal_emit_diagnostic(&r); }
inline TracePosition current_trace_position() {
  TracePosition p;
  sonde_internal_trace_position(&p);
  return p;
}

// The clocks of libsonde's records (monitor/clock.hpp), read directly.
inline int64_t epoch_ns_now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t monotonic_ns_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace sonde::preload
