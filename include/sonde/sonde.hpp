// sonde: C++ probes. SONDE_SCOPE() records the enclosing function under its
// full signature; SONDE_SCOPE_NAMED("name") under an explicit name. An
// exception leaving the scope records a failed event with the exception's
// type and message.
//
//   void Catalog::getBook(bool fast) {
//     SONDE_SCOPE();
//     ...
//   }
#pragma once

#include <exception>

#include "sonde/sonde.h"

namespace sonde {

namespace detail {
// Describes the exception now propagating through the calling thread
// ("type: what()"), as captured when it was thrown.
SONDE_API const char* current_exception_cause() noexcept;
}  // namespace detail

class Scope {
 public:
  explicit Scope(sonde_op* op) noexcept : op_(op), exceptions_(std::uncaught_exceptions()) {
    sonde_begin(op_);
  }
  ~Scope() {
    if (std::uncaught_exceptions() > exceptions_) {
      sonde_failed(op_, detail::current_exception_cause());
    } else {
      sonde_end(op_);
    }
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  sonde_op* op_;
  int exceptions_;
};

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
#define SONDE_SCOPE_NAMED(op_name)                                                       \
  static sonde_op SONDE_DETAIL_CAT(sonde_op_, __LINE__) = SONDE_OP_INIT(op_name);        \
  ::sonde::Scope SONDE_DETAIL_CAT(sonde_scope_, __LINE__)(&SONDE_DETAIL_CAT(sonde_op_, __LINE__))
#define SONDE_SCOPE() SONDE_SCOPE_NAMED(__PRETTY_FUNCTION__)
