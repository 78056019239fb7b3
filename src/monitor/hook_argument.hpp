// Whose hook call is this? -finstrument-functions passes the instrumented
// function's address as the hooks' first argument (%rdi). After inlining,
// one hook call can serve several functions: SQLite's freeP4 has
// sqlite3KeyInfoUnref and freeEphemeralFunction inlined, loads either
// address into %rbx on its own path, and both paths end in one
// `mov %rbx,%rdi; call __cyg_profile_func_exit`. Patching that call out
// because freeEphemeralFunction was excluded silenced sqlite3KeyInfoUnref's
// exits too: its frames stayed open until an outer exit closed them as
// unwound (154 in a speedtest1 run culled from the start, 2026-11-29).
//
// So a hook call (or a tail jump to the exit hook) is patched only when its
// code shows that %rdi holds the requesting function's address on every
// path that reaches it: a forward data-flow analysis of the containing
// function (Capstone, one linear sweep from its ELF symbol's start to its
// end, then basic blocks over its direct jumps) tracks which address each
// register holds, through `lea fn(%rip),%reg`, `mov %reg,%reg` and loads
// from constant slots (`mov got(%rip),%reg`, a function of another
// object); calls
// clobber the caller-saved registers, any other write makes a register
// unknown, and paths that disagree make it unknown. Where the function
// jumps through a register (a jump table) every block start may be a
// target, and blocks nothing visible reaches (exception landing pads)
// start with what the callee-saved registers held at the calls. Anything not proven leaves the call
// as it is.
//
// Pure: the caller supplies the code as compiled (patched bytes put back).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace sonde::monitor {

// Reads the 8-byte value at a rip-relative address the code loads from,
// if it cannot change (a GOT slot after relocation); false otherwise.
using ConstantSlot = std::function<bool(uint64_t address, uint64_t* value)>;

class FunctionCode {
 public:
  // `code`: the `size` bytes of a function that lie at `address`. A
  // function of another object reaches the hooks as a value loaded from a
  // GOT slot (`mov slot(%rip),%reg`); `read_slot` says what it holds.
  FunctionCode(const uint8_t* code, size_t size, uint64_t address,
               const ConstantSlot& read_slot = {});
  ~FunctionCode();
  FunctionCode(const FunctionCode&) = delete;
  FunctionCode& operator=(const FunctionCode&) = delete;

  // Whether the call or jump starting at `at` passes `fn` in %rdi on every
  // path the sweep can see. False if `at` is no instruction boundary.
  bool passes(uint64_t at, uint64_t fn) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sonde::monitor
