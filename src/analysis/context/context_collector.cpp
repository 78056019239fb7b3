#include "analysis/context/context_collector.hpp"

#include "analysis/model/call_tree.hpp"

namespace sonde::analysis {

size_t U32VectorHash::operator()(const std::vector<uint32_t>& v) const noexcept {
  // FNV-1a over the words, then a final mix; collisions only cost a compare.
  uint64_t h = 1469598103934665603ULL ^ v.size();
  for (uint32_t x : v) h = (h ^ x) * 1099511628211ULL;
  h ^= h >> 29;
  return static_cast<size_t>(h * 0xbf58476d1ce4e5b9ULL);
}

uint32_t ContextCollector::intern_operation(std::string_view name) {
  if (auto it = operation_ids_.find(name); it != operation_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(data_.operations.size());
  operation_ids_.emplace(std::string(name), id);
  data_.operations.emplace_back(name);
  return id;
}

void ContextCollector::on_trace(const Trace& trace) {
  const std::vector<Execution>& ex = trace.executions;
  for (const Execution& e : ex) {
    if (e.tout < 0 || e.tout < e.tin) {
      ++data_.skipped_traces;
      return;
    }
  }
  const CallTree tree = build_call_tree(trace);
  std::vector<std::string_view> ops;
  std::vector<int64_t> durations;
  ops.reserve(ex.size());
  durations.reserve(ex.size());
  for (const Execution& e : ex) {
    ops.push_back(e.operation);
    durations.push_back(e.duration());
  }
  add_tree(ops, tree.parent, durations, trace.trace_id);
}

void ContextCollector::add_tree(const std::vector<std::string_view>& ops,
                                const std::vector<int32_t>& parent,
                                const std::vector<int64_t>& durations, int64_t trace_id) {
  const size_t n = ops.size();
  if (n == 0) return;
  ++data_.traces;
  ops_.resize(n);
  stacks_.resize(n);
  key_.clear();
  std::vector<uint32_t> callers(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t op = intern_operation(ops[i]);
    ops_[i] = op;
    const int32_t p = parent[i];
    const uint32_t caller_op = p < 0 ? kNoContext : ops_[static_cast<size_t>(p)];
    auto [c, new_caller] = caller_ids_.try_emplace(context_pair_key(op, caller_op),
                                                   static_cast<uint32_t>(data_.caller_op.size()));
    if (new_caller) {
      data_.caller_op.push_back(op);
      data_.caller_of.push_back(caller_op);
    }
    callers[i] = c->second;
    const uint32_t parent_stack = p < 0 ? kNoContext : stacks_[static_cast<size_t>(p)];
    auto [s, new_stack] = stack_ids_.try_emplace(context_pair_key(op, parent_stack),
                                                 static_cast<uint32_t>(data_.stack_op.size()));
    if (new_stack) {
      data_.stack_op.push_back(op);
      data_.stack_parent.push_back(parent_stack);
      data_.stack_caller.push_back(c->second);
    }
    stacks_[i] = s->second;
    // Pre-order operations plus parent positions identify the ordered tree.
    key_.push_back(op);
    key_.push_back(static_cast<uint32_t>(p + 1));
  }
  auto [sh, new_shape] = shape_ids_.try_emplace(key_, static_cast<uint32_t>(data_.shapes.size()));
  if (new_shape) {
    TraceShape shape;
    shape.ops = ops_;
    shape.parent = parent;
    shape.moments.resize(n);
    shape.first_context = static_cast<uint32_t>(data_.trace_stack.size());
    for (size_t i = 0; i < n; ++i) {
      data_.trace_stack.push_back(stacks_[i]);
      data_.trace_shape.push_back(sh->second);
      data_.trace_position.push_back(static_cast<int32_t>(i));
    }
    data_.shapes.push_back(std::move(shape));
  }
  TraceShape& shape = data_.shapes[sh->second];
  ++shape.traces;
  for (size_t i = 0; i < n; ++i) {
    shape.moments[i].add(static_cast<double>(durations[i]));
    data_.observations.push_back({durations[i], trace_id, ops_[i], callers[i], stacks_[i],
                                  shape.first_context + static_cast<uint32_t>(i),
                                  static_cast<int32_t>(i)});
  }
}

}  // namespace sonde::analysis
