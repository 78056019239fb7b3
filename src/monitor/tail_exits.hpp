// Exit hook calls that g++ compiles as tail jumps. At the very end of a void
// function, `call __cyg_profile_func_exit; ret` becomes `jmp
// __cyg_profile_func_exit` (1,043 of SQLite's 10,696 exit hook calls in
// speedtest1, 1,078 of 23,424 in db_bench). The hook then returns straight
// to the function's caller, so the return address it sees is the caller's:
// the site cannot be found from it, and a culled function's tail exits kept
// calling the hook (~4 ns each, plus a patch request that can never
// succeed: 15 % of a culled SQLite run's samples were in these two).
//
// Found instead by decoding the function itself (Capstone), from its start
// to its end (its ELF symbol's size): every `jmp rel32` or `jmp
// *disp32(%rip)` is returned with its target (the callee, or the pointer
// slot), for the caller to check against the exit hook. Replacing such a
// jump's first byte with `ret` (c3) is exact: the jump left with the
// function's frame already popped and the return address on top, which is
// where the hook's own `ret` would have gone; a void function has no
// return value for the hook to keep.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sonde::monitor {

struct TailJump {
  uint64_t address = 0;   // the jump instruction
  uint32_t length = 0;    // 5 (e9 rel32) or 6 (ff 25 disp32)
  bool indirect = false;  // ff 25: `target` is the pointer slot
  uint64_t target = 0;
};

// Decodes `size` bytes of code at `code`, which lie at `address` in the
// program, in one linear sweep, and returns the near jumps it met. Stops at
// the first byte sequence that is not an instruction (data, or the end of
// what the symbol covers). Thread-safe; allocates.
std::vector<TailJump> find_tail_jumps(const uint8_t* code, size_t size, uint64_t address);

}  // namespace sonde::monitor
