#include "analysis/context/context_data.hpp"

#include <algorithm>

namespace sonde::analysis {

const char* to_string(ContextLevel level) {
  switch (level) {
    case ContextLevel::kOperation:
      return "operation";
    case ContextLevel::kCaller:
      return "caller";
    case ContextLevel::kStack:
      return "stack";
    case ContextLevel::kTrace:
      return "trace";
  }
  return "?";
}

size_t ContextData::contexts(ContextLevel level) const {
  switch (level) {
    case ContextLevel::kOperation:
      return operations.size();
    case ContextLevel::kCaller:
      return caller_op.size();
    case ContextLevel::kStack:
      return stack_op.size();
    case ContextLevel::kTrace:
      return trace_stack.size();
  }
  return 0;
}

uint32_t ContextData::context_of(const ContextObservation& o, ContextLevel level) const {
  switch (level) {
    case ContextLevel::kOperation:
      return o.op;
    case ContextLevel::kCaller:
      return o.caller;
    case ContextLevel::kStack:
      return o.stack;
    case ContextLevel::kTrace:
      return o.trace;
  }
  return kNoContext;
}

uint32_t ContextData::coarser(ContextLevel level, uint32_t id) const {
  switch (level) {
    case ContextLevel::kOperation:
      return kNoContext;
    case ContextLevel::kCaller:
      return caller_op[id];
    case ContextLevel::kStack:
      return stack_caller[id];
    case ContextLevel::kTrace:
      return trace_stack[id];
  }
  return kNoContext;
}

uint32_t ContextData::operation_of(ContextLevel level, uint32_t id) const {
  while (level != ContextLevel::kOperation) {
    id = coarser(level, id);
    level = static_cast<ContextLevel>(static_cast<int>(level) - 1);
  }
  return id;
}

std::string ContextData::describe(ContextLevel level, uint32_t id) const {
  switch (level) {
    case ContextLevel::kOperation:
      return operations[id];
    case ContextLevel::kCaller: {
      const uint32_t c = caller_of[id];
      return operations[caller_op[id]] + " <- " + (c == kNoContext ? "$" : operations[c]);
    }
    case ContextLevel::kStack: {
      // The innermost frames only: a description per stack context of a
      // 100,000-deep trace must not cost 100,000 frames each.
      std::vector<uint32_t> path;
      uint32_t s = id;
      for (; s != kNoContext && path.size() < kDescribedFrames; s = stack_parent[s]) {
        path.push_back(stack_op[s]);
      }
      std::string text = s == kNoContext ? "$" : "$ > …";
      for (auto it = path.rbegin(); it != path.rend(); ++it) text += " > " + operations[*it];
      return text;
    }
    case ContextLevel::kTrace:
      return operations[operation_of(level, id)] + " @ shape " + std::to_string(trace_shape[id]) +
             " position " + std::to_string(trace_position[id]);
  }
  return {};
}

}  // namespace sonde::analysis
