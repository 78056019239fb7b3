// Names the exception that is unwinding through a probe. While an exception
// propagates it is not yet "current" (std::current_exception() is empty
// until a handler catches it), so libsonde interposes __cxa_throw and notes
// the type and what() of each throw in a thread-local buffer first.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <typeinfo>

#include "monitor/symbolizer.hpp"
#include "monitor/thread_state.hpp"
#include "sonde/sonde.hpp"

namespace {

thread_local char t_cause[512] [[gnu::tls_model("initial-exec")]];

using CxaThrow = void (*)(void*, std::type_info*, void (*)(void*));

void note_exception(void* object, std::type_info* type) {
  std::string name = sonde::monitor::demangle(type->name());
  const char* what = nullptr;
  void* adjusted = object;
  // __do_catch adjusts the pointer to the std::exception base if there is one.
  if (typeid(std::exception).__do_catch(type, &adjusted, 1)) {
    what = static_cast<std::exception*>(adjusted)->what();
  }
  if (what != nullptr && *what != '\0') {
    std::snprintf(t_cause, sizeof t_cause, "%s: %s", name.c_str(), what);
  } else {
    std::snprintf(t_cause, sizeof t_cause, "%s", name.c_str());
  }
}

}  // namespace

extern "C" SONDE_API [[noreturn]] void __cxa_throw(void* object, std::type_info* type,
                                                   void (*destructor)(void*)) {
  static CxaThrow real = reinterpret_cast<CxaThrow>(dlsym(RTLD_NEXT, "__cxa_throw"));
  ++sonde::monitor::t_state.throws;
  try {
    note_exception(object, type);
  } catch (...) {
    t_cause[0] = '\0';
  }
  real(object, type, destructor);
  __builtin_unreachable();
}

using CxaRethrow = void (*)();

// A rethrow (`throw;`) starts unwinding again: scopes it leaves failed too.
extern "C" SONDE_API [[noreturn]] void __cxa_rethrow() {
  static CxaRethrow real = reinterpret_cast<CxaRethrow>(dlsym(RTLD_NEXT, "__cxa_rethrow"));
  ++sonde::monitor::t_state.throws;
  real();
  __builtin_unreachable();
}

namespace sonde::detail {

SONDE_API const char* current_exception_cause() noexcept {
  return t_cause[0] != '\0' ? t_cause : "unknown exception";
}

}  // namespace sonde::detail
