#include "analysis/reconstruct/flow_trace_builder.hpp"

#include <string>

#include "analysis/model/operation_signature.hpp"
#include "analysis/reconstruct/flow_names.hpp"
#include "analysis/reconstruct/trace_build_result.hpp"

namespace sonde::analysis {
namespace {

// Modifiers, return type, name and parameters equal; the class may differ.
bool same_apart_from_class(std::string_view a, std::string_view b) {
  const SignatureParts pa = split_operation_signature(a);
  const SignatureParts pb = split_operation_signature(b);
  return pa.prefix == pb.prefix && pa.name == pb.name && pa.parameters == pb.parameters &&
         pa.has_parentheses == pb.has_parentheses;
}

std::string describe(const FlowEvent& e) {
  return "op " + std::string(e.operation) + " (order index " + std::to_string(e.order_index) + ")";
}

}  // namespace

bool is_call_of(const FlowEvent& call, const FlowEvent& before) {
  if (call.kind != FlowEventKind::kCall || before.kind != FlowEventKind::kBefore) return false;
  if (int64_t{call.order_index} + 1 != before.order_index) return false;
  if (before.constructor && !call.constructor) return false;
  if (!same_text(call.callee_component, before.component)) return false;
  return same_text(call.callee_operation, before.operation) ||
         same_apart_from_class(call.callee_operation, before.operation);
}

thread_local std::vector<FlowTraceBuilder::Open> FlowTraceBuilder::spare_stack_;

FlowTraceBuilder::FlowTraceBuilder(Trace& trace, std::vector<TraceProblem>& problems, bool repair)
    : trace_(trace), problems_(problems), repair_(repair) {
  stack_.swap(spare_stack_);
  stack_.clear();
  stack_.reserve(16);  // the first trace on a thread: room without a growth chain
}

FlowTraceBuilder::~FlowTraceBuilder() {
  // A deep trace's room is not kept for the thread's life.
  constexpr size_t kLargestKept = 4096;
  if (stack_.capacity() <= kLargestKept) spare_stack_.swap(stack_);
}

void FlowTraceBuilder::add(const FlowEvent& e) {
  switch (e.kind) {
    case FlowEventKind::kBefore:
      on_before(e);
      break;
    case FlowEventKind::kAfter:
    case FlowEventKind::kAfterFailed:
      on_after(e);
      break;
    case FlowEventKind::kCall:
      on_call(e);
      break;
    case FlowEventKind::kOther:
      break;  // takes its order index, nothing else (Kieker ignores SplitEvent & co.)
  }
}

void FlowTraceBuilder::open_execution(const FlowEvent& e) {
  const bool call = e.kind == FlowEventKind::kCall;
  Execution x;
  x.operation = call ? e.callee_operation : e.operation;
  x.component = component_or_class(call ? e.callee_component : e.component, x.operation);
  x.host = trace_.host;
  x.tin = e.timestamp;
  x.tout = -1;
  x.order_index = e.order_index;
  x.eoi = static_cast<int32_t>(trace_.executions.size());
  x.ess = open_executions_++;
  x.assumed = call;  // until its callee's before event shows up
  x.call_only = call;
  stack_.push_back({&e, static_cast<uint32_t>(trace_.executions.size()), false});
  trace_.executions.push_back(x);
}

void FlowTraceBuilder::on_before(const FlowEvent& e) {
  if (!stack_.empty() && is_call_of(*stack_.back().event, e)) {
    // The callee of the call just made: that call's execution, with the
    // callee's own times (the call's time is the caller's).
    Execution& x = trace_.executions[stack_.back().execution];
    x.operation = e.operation;
    x.component = component_or_class(e.component, e.operation);
    x.tin = e.timestamp;
    x.order_index = e.order_index;
    x.assumed = false;
    x.call_only = false;
    stack_.push_back({&e, stack_.back().execution, true});
    return;
  }
  close_returned_calls(e);
  open_execution(e);
  // Kieker: a before without its call is a certain call only as the root.
  trace_.executions.back().assumed = trace_.executions.back().ess > 0;
}

void FlowTraceBuilder::on_call(const FlowEvent& e) {
  close_returned_calls(e);
  open_execution(e);
}

void FlowTraceBuilder::close_returned_calls(const FlowEvent& current) {
  for (size_t i = stack_.size(); i > 0 && is_open_call(stack_[i - 1]); --i) {
    if (same_text(stack_[i - 1].event->operation, current.operation)) {
      close_entries_above(i - 1, current.timestamp, current.order_index);
      return;
    }
  }
}

void FlowTraceBuilder::close_entries_above(size_t from, int64_t tout, int32_t exit_order_index) {
  for (size_t i = stack_.size(); i-- > from;) {
    const Open& o = stack_[i];
    Execution& x = trace_.executions[o.execution];
    if (o.event->kind == FlowEventKind::kCall) {
      if (i + 1 < stack_.size() && stack_[i + 1].matched_before)
        continue;  // closed with its before
    } else {
      x.repaired = true;  // a before whose after event never came
    }
    x.tout = tout;
    x.exit_order_index = exit_order_index;
    --open_executions_;
  }
  stack_.resize(from);
}

void FlowTraceBuilder::on_after(const FlowEvent& e) {
  close_returned_calls(e);
  if (stack_.empty()) {
    add_problem(problems_, TraceProblemKind::kUnmatchedAfterEvent,
                "after event for " + describe(e) + " with no open before event");
    return;
  }
  const std::string_view component = component_or_class(e.component, e.operation);
  auto closes = [&](const Open& o) {
    if (o.event->kind != FlowEventKind::kBefore) return false;
    if (e.constructor && !o.event->constructor) return false;
    const Execution& x = trace_.executions[o.execution];
    return same_text(x.operation, e.operation) && same_text(x.component, component);
  };
  size_t match = stack_.size() - 1;
  if (!closes(stack_[match])) {
    bool found = false;
    if (repair_) {
      for (size_t i = stack_.size() - 1; i-- > 0;) {
        if (closes(stack_[i])) {
          match = i;
          found = true;
          break;
        }
      }
    }
    if (!found) {
      const Open& top = stack_.back();
      add_problem(problems_, TraceProblemKind::kMismatchedAfterEvent,
                  "after event for " + describe(e) + " while " +
                      (is_open_call(top) ? "a call of op " : "op ") +
                      std::string(trace_.executions[top.execution].operation) + " is open");
      return;
    }
    close_entries_above(match + 1, e.timestamp, e.order_index);
  }
  const Open closed = stack_[match];
  Execution& x = trace_.executions[closed.execution];
  x.tout = e.timestamp;
  x.exit_order_index = e.order_index;
  x.failed = e.kind == FlowEventKind::kAfterFailed;
  x.cause = e.cause;
  --open_executions_;
  // A matched before leaves with its call.
  stack_.resize(closed.matched_before ? match - 1 : match);
}

void FlowTraceBuilder::finish(bool close_open_executions, int64_t last_timestamp) {
  if (stack_.empty()) return;
  bool befores_open = false;
  for (const Open& o : stack_) befores_open = befores_open || !is_open_call(o);
  if (befores_open && !close_open_executions) {
    for (const Open& o : stack_) {
      if (is_open_call(o)) continue;
      const Execution& x = trace_.executions[o.execution];
      add_problem(problems_, TraceProblemKind::kMissingAfterEvent,
                  "missing after event for op " + std::string(x.operation) + " (eoi " +
                      std::to_string(x.eoi) + ")");
    }
    return;
  }
  // Kieker closes the calls left open at the time of the newest open event
  // (only calls remain): the innermost callee then lasts 0 ns. With repair,
  // the befores still open end at the trace's latest time, as before.
  const int64_t end = befores_open ? last_timestamp : stack_.back().event->timestamp;
  close_entries_above(0, end, -1);
}

}  // namespace sonde::analysis
