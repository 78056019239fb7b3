// Every way a C++ exception starts unwinding, interposed so that a scope it
// leaves ends as failed (sonde.hpp, probes.cpp): __cxa_throw (`throw x`),
// __cxa_rethrow (`throw;`) and std::rethrow_exception (which raises the
// exception itself, through neither of the other two). Each reports the
// throw to libsonde (exceptions.cpp) and calls the real function.
//
// While monitoring is off a throw costs one load more and one call that
// only counts it; while it is on, libsonde also notes the exception's type
// and copies its what() (the name is demangled only if a scope fails).
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

#include "monitor/preload/interpose_common.hpp"
#include "sonde/sonde.hpp"

namespace {

using CxaThrowFn = void (*)(void*, std::type_info*, void (*)(void*));
using CxaRethrowFn = void (*)();
using RethrowExceptionFn = void (*)(std::exception_ptr);

constexpr const char* kRethrowException =
    "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE";

bool monitoring_on() { return __atomic_load_n(&sonde::sonde_probe_gate, __ATOMIC_RELAXED) != 0; }

// The object an exception_ptr refers to. The standard gives no access;
// libstdc++'s (and libc++'s) exception_ptr is exactly that one pointer.
void* object_of(const std::exception_ptr& p) {
  static_assert(sizeof(std::exception_ptr) == sizeof(void*));
  void* object = nullptr;
  std::memcpy(&object, &p, sizeof object);
  return object;
}

// Counts a throw of the exception `p` refers to, and notes it while
// monitoring is on.
void report_throw_of(const std::exception_ptr& p) {
  const std::type_info* type = p ? p.__cxa_exception_type() : nullptr;
  if (monitoring_on() && type != nullptr) {
    sonde_internal_note_throw(object_of(p), type);
  } else {
    sonde_internal_count_throw();
  }
}

}  // namespace

// Not declared [[noreturn]], nor is __cxa_rethrow below: then the real
// function is jumped to (a sibling call), and this frame is gone before the
// unwinder walks the stack, which would otherwise cost it one more frame to
// unwind in each of its two phases. (GCC keeps the frame of a call to a
// noreturn function, for backtraces.)
SONDE_INTERPOSE void __cxa_throw(void* object, std::type_info* type, void (*destructor)(void*)) {
  static const auto real = reinterpret_cast<CxaThrowFn>(dlsym(RTLD_NEXT, "__cxa_throw"));
  if (monitoring_on()) {
    sonde_internal_note_throw(object, type);
  } else {
    sonde_internal_count_throw();
  }
  if (real == nullptr) std::abort();
  real(object, type, destructor);
}

// A rethrow (`throw;`) starts unwinding again: scopes it leaves failed too,
// with the cause of the exception being handled (not necessarily the last
// one thrown on this thread).
SONDE_INTERPOSE void __cxa_rethrow() {
  static const auto real = reinterpret_cast<CxaRethrowFn>(dlsym(RTLD_NEXT, "__cxa_rethrow"));
  if (monitoring_on()) {
    report_throw_of(std::current_exception());
  } else {
    sonde_internal_count_throw();
  }
  if (real == nullptr) std::abort();
  real();
}

// std::rethrow_exception, e.g. of an exception a std::future carried over
// from another thread: defined here under its own (mangled) name, which
// the program's calls bind to like the others.
namespace std {

[[noreturn]] void rethrow_exception(exception_ptr p) {
  static const auto real =
      reinterpret_cast<RethrowExceptionFn>(dlsym(RTLD_NEXT, kRethrowException));
  report_throw_of(p);
  if (real == nullptr) std::abort();
  real(p);
  __builtin_unreachable();
}

}  // namespace std
