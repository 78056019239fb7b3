// The calling contexts of every execution of a set of traces (seed 000,
// Rohr et al. 2008): for each execution its operation, its caller context
// (operation + caller's operation), its stack context (operation names on
// the path from the root) and its trace context (the same ordered,
// operation-labelled call tree and the same pre-order position in it).
//
// Context ids are exact (interned), not hashes, so two contexts are equal
// only if their keys are. Each finer context id maps to exactly one coarser
// one (trace -> stack -> caller -> operation): the implication
// trace ⇒ stack ⇒ caller holds by construction, and tests check it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/context/context_moments.hpp"

namespace sonde::analysis {

inline constexpr uint32_t kNoContext = UINT32_MAX;  // e.g. the caller of a root: `$`

enum class ContextLevel : uint8_t { kOperation, kCaller, kStack, kTrace };
inline constexpr int kContextLevels = 4;
const char* to_string(ContextLevel level);

struct ContextObservation {
  int64_t duration = 0;  // inclusive response time, ns
  int64_t trace_id = 0;
  uint32_t op = 0;
  uint32_t caller = 0;  // caller-context id
  uint32_t stack = 0;   // stack-context id
  uint32_t trace = 0;   // trace-context id
  int32_t eoi = 0;
};

// A distinct ordered call-tree shape; the trace contexts of its positions
// are first_context .. first_context + ops.size() - 1.
struct TraceShape {
  std::vector<uint32_t> ops;     // operation per pre-order position
  std::vector<int32_t> parent;   // parent position, -1 for a root
  std::vector<Moments> moments;  // durations per position over all its traces
  uint32_t first_context = 0;
  uint64_t traces = 0;
};

struct ContextData {
  std::vector<std::string> operations;  // operation id -> signature
  std::vector<ContextObservation> observations;

  // Caller contexts: operation and the caller's operation (kNoContext = `$`).
  std::vector<uint32_t> caller_op;
  std::vector<uint32_t> caller_of;
  // Stack contexts: operation, parent stack context (kNoContext at a root)
  // and the caller context they imply.
  std::vector<uint32_t> stack_op;
  std::vector<uint32_t> stack_parent;
  std::vector<uint32_t> stack_caller;
  // Trace contexts: the stack context they imply, and shape + position.
  std::vector<uint32_t> trace_stack;
  std::vector<uint32_t> trace_shape;
  std::vector<int32_t> trace_position;
  std::vector<TraceShape> shapes;

  uint64_t traces = 0;
  uint64_t skipped_traces = 0;  // invalid, or an execution without exit

  size_t contexts(ContextLevel level) const;
  // The context id of an observation at `level` (the operation id at kOperation).
  uint32_t context_of(const ContextObservation& o, ContextLevel level) const;
  // The coarser context (one level up) of context `id` at `level` > kOperation.
  uint32_t coarser(ContextLevel level, uint32_t id) const;
  uint32_t operation_of(ContextLevel level, uint32_t id) const;
  // For people: "op <- caller", "$ > root > a > op", "op @ shape 3 position 2".
  // Stack contexts show their innermost kDescribedFrames frames ("$ > … > x").
  static constexpr size_t kDescribedFrames = 12;
  std::string describe(ContextLevel level, uint32_t id) const;
};

}  // namespace sonde::analysis
