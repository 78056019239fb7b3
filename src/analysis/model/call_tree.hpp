// The call tree of one trace, derived from eoi/ess alone. Executions are in
// eoi order, which is the pre-order of the tree, so walking
// trace.executions front to back already visits callers before callees; this
// header adds the parent/child links. Built with an explicit stack: a trace
// 100,000 calls deep costs memory, not native stack.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct CallTree {
  // Indices into trace.executions; -1 = none. A trace may have several roots
  // (executions at ess 0), as Kieker allows.
  std::vector<int32_t> parent;
  std::vector<int32_t> first_child;
  std::vector<int32_t> next_sibling;
  int32_t first_root = -1;  // further roots follow through next_sibling
};

// The parent of an execution is the closest earlier execution one level up.
// If a (malformed) ess jumps by more than one, the closest open execution
// becomes the parent.
CallTree build_call_tree(const Trace& trace);

// Exclusive time: inclusive duration minus the inclusive durations of the
// direct callees. Not clamped: a negative value means callees were timed
// longer than their caller (clock skew across hosts, or repaired exits).
std::vector<int64_t> exclusive_durations(const Trace& trace, const CallTree& tree);

}  // namespace sonde::analysis
