// sonde: C++ probes. SONDE_SCOPE() records the enclosing function under its
// full signature; SONDE_SCOPE_NAMED("name") under an explicit name. An
// exception leaving the scope records a failed event with the exception's
// type and message, seen through libsonde-preload's __cxa_throw (loaded by
// `sonde run`, or linked; docs/probes.md): with libsonde alone such an exit
// is recorded as a normal one.
//
//   void Catalog::getBook(bool fast) {
//     SONDE_SCOPE();
//     ...
//   }
//
// With SONDE_ENABLE=0 (sonde/sonde.h) the scopes compile to nothing and the
// program needs no libsonde.
#pragma once

#include <exception>

#include "sonde/sonde.h"

namespace sonde {

#if SONDE_ENABLE

namespace detail {
// Describes the exception now propagating through the calling thread
// ("type: what()"), as captured when it was thrown.
SONDE_API const char* current_exception_cause() noexcept;
// sonde_begin for scopes: returns 0 if nothing was recorded, otherwise a
// token that scope_end uses to tell a normal exit from unwinding.
SONDE_API uint64_t scope_begin(sonde_op* op) noexcept;
// Records the end, as failed (with the exception's type and message) if an
// exception thrown since scope_begin is propagating.
SONDE_API void scope_end(sonde_op* op, uint64_t token) noexcept;
}  // namespace detail

// Nonzero while probes may record: checked inline, so a disabled probe costs
// a load and a branch instead of a call into libsonde.
extern "C" SONDE_API unsigned char sonde_probe_gate;
// The state value of an operation excluded by the current patterns; checked
// inline too, so an excluded probe does not call into libsonde either.
extern "C" SONDE_API unsigned char sonde_op_off_tag;

class Scope {
 public:
  explicit Scope(sonde_op* op) noexcept
      : op_(op),
        token_(__atomic_load_n(&sonde_probe_gate, __ATOMIC_RELAXED) != 0 &&
                       __atomic_load_n(&op->state, __ATOMIC_RELAXED) !=
                           __atomic_load_n(&sonde_op_off_tag, __ATOMIC_RELAXED)
                   ? detail::scope_begin(op)
                   : 0) {}
  ~Scope() {
    if (token_ != 0) detail::scope_end(op_, token_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  sonde_op* op_;
  uint64_t token_;
};

#else  // !SONDE_ENABLE: a scope that records nothing and calls nothing.

class Scope {
 public:
  explicit Scope(sonde_op* /*op*/) noexcept {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

#endif  // SONDE_ENABLE

// Captures the current trace position and continues it where invoked:
//   auto ctx = sonde::Context::capture();
//   std::thread t([ctx] { ctx.continue_here(); work(); });
class Context {
 public:
  static Context capture() noexcept { return Context(sonde_context_capture()); }
  void continue_here() const noexcept { sonde_context_continue(&ctx_); }
  bool valid() const noexcept { return (ctx_.flags & 1u) != 0; }
  const sonde_context& raw() const noexcept { return ctx_; }

 private:
  explicit Context(sonde_context c) : ctx_(c) {}
  sonde_context ctx_;
};

}  // namespace sonde

#define SONDE_DETAIL_CAT2(a, b) a##b
#define SONDE_DETAIL_CAT(a, b) SONDE_DETAIL_CAT2(a, b)
#if SONDE_ENABLE
#define SONDE_SCOPE_NAMED(op_name)                                                \
  static sonde_op SONDE_DETAIL_CAT(sonde_op_, __LINE__) = SONDE_OP_INIT(op_name); \
  ::sonde::Scope SONDE_DETAIL_CAT(sonde_scope_, __LINE__)(&SONDE_DETAIL_CAT(sonde_op_, __LINE__))
#else
// Nothing at all; sizeof keeps a name variable "used" without evaluating it.
#define SONDE_SCOPE_NAMED(op_name) static_cast<void>(sizeof(op_name))
#endif
#define SONDE_SCOPE() SONDE_SCOPE_NAMED(__PRETTY_FUNCTION__)
