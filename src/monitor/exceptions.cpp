// The causes of exceptions that unwind through C++ scopes. While an
// exception propagates it is not yet "current" (std::current_exception() is
// empty until a handler catches it), so the preload library's __cxa_throw,
// __cxa_rethrow and std::rethrow_exception report each throw here: counted
// in t_state.throws (a scope's end compares the count with the one at its
// begin, probes.cpp) and, while monitoring is on, noted with its type and
// what(). The type's name is demangled only when a failing scope asks for
// the cause, once per throw: a throw nobody records costs no demangling.
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

#include "monitor/preload_abi.hpp"
#include "monitor/thread_state.hpp"
#include "sonde/sonde.hpp"

namespace {

// The last noted throw of this thread: its type (null: unknown) and, in
// t_cause, its what() until a scope asks, then "type: what()".
__thread const std::type_info* t_note_type __attribute__((tls_model("initial-exec")));
__thread bool t_note_formatted __attribute__((tls_model("initial-exec")));
__thread char t_cause[512] __attribute__((tls_model("initial-exec")));

}  // namespace

extern "C" {

SONDE_INTERNAL void sonde_internal_note_throw(void* object, const std::type_info* type) {
  ++sonde::monitor::t_state.throws;
  t_note_type = type;
  t_note_formatted = false;
  t_cause[0] = '\0';
  if (type == nullptr) return;
  // __do_catch adjusts the pointer to the std::exception base if there is one.
  void* adjusted = object;
  if (!typeid(std::exception).__do_catch(type, &adjusted, 1)) return;
  // Copied now: the object may be gone by the time a scope asks (caught
  // and destroyed inside a destructor that runs during the unwinding).
  const char* what = static_cast<const std::exception*>(adjusted)->what();
  if (what == nullptr) return;
  size_t n = strnlen(what, sizeof t_cause - 1);
  std::memcpy(t_cause, what, n);
  t_cause[n] = '\0';
}

SONDE_INTERNAL void sonde_internal_count_throw(void) {
  ++sonde::monitor::t_state.throws;
  t_note_type = nullptr;  // an older note would name the wrong exception
}

}  // extern "C"

namespace sonde::detail {

SONDE_API const char* current_exception_cause() noexcept {
  if (t_note_type == nullptr) return "unknown exception";
  if (t_note_formatted) return t_cause;
  t_note_formatted = true;
  // __cxa_demangle reports failures by status, never by throwing.
  int status = 0;
  const char* mangled = t_note_type->name();
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  const char* name = status == 0 && demangled != nullptr ? demangled : mangled;
  // "type: what()", or the type alone; truncated to the buffer.
  char text[sizeof t_cause];
  size_t n = 0;
  auto append = [&text, &n](const char* s) {
    size_t k = strnlen(s, sizeof text - 1 - n);
    std::memcpy(text + n, s, k);
    n += k;
  };
  append(name);
  if (t_cause[0] != '\0') {
    append(": ");
    append(t_cause);
  }
  text[n] = '\0';
  std::memcpy(t_cause, text, n + 1);
  std::free(demangled);
  return t_cause;
}

}  // namespace sonde::detail
