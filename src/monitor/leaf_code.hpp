// Functions whose code cannot take long: straight-line leaves. Culling
// (cull.md, "Leaves") excludes a hot function as soon as it has been called
// often enough, without waiting for its window to measure its duration,
// when its machine code shows the duration is bounded: every instruction
// runs at most once (no backward branch, no `rep` string instruction, no
// `loop`), nothing is called but the instrumentation hooks, and there are
// at most a given number of instructions. Such a function calls no
// monitored function, so excluding it hides no subtree; it is what
// -finstrument-functions makes of accessors and small inlined templates.
//
// The decision is made from the code alone (Capstone), in one linear sweep
// from the function's start to its end (its ELF symbol's size); anything
// the sweep cannot account for (an undecodable byte, an indirect jump, a
// call or tail call to anything but a hook, a system call) says "not a
// bounded leaf".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace sonde::monitor {

struct LeafVerdict {
  bool bounded = false;       // a straight-line leaf within the instruction limit
  uint32_t instructions = 0;  // decoded before the verdict
  const char* reason = "";    // why not, for tests and the debugging reader
  bool retry = false;         // no verdict yet (classify_function_code): ask again later
};

// Whether a call or jump reaches an instrumentation hook: `target` is the
// callee (through_slot false) or the pointer slot an indirect `call/jmp
// *disp(%rip)` reads (through_slot true).
using ReachesHook = std::function<bool(uint64_t target, bool through_slot)>;

// `code`: the `size` bytes of the function, which lie at `address` in the
// program. Thread-safe; allocates.
LeafVerdict classify_leaf(const uint8_t* code, size_t size, uint64_t address,
                          uint32_t max_instructions, const ReachesHook& reaches_hook);

}  // namespace sonde::monitor
