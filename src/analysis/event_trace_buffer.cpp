#include "analysis/event_trace_buffer.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "analysis/operation_signature.hpp"

namespace sonde::analysis {
namespace {

// Equal text; names of one trace are interned, so equal ones usually share
// their bytes and need no comparison (memcmp was 4 % of reading a log).
bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

bool same_operation(std::string_view op_a, std::string_view cls_a, std::string_view op_b,
                    std::string_view cls_b) {
  return op_a == op_b && cls_a == cls_b;
}

std::string describe(const FlowEvent& e) {
  return "op " + std::string(e.operation) + " (order index " + std::to_string(e.order_index) + ")";
}

}  // namespace

EventTraceBuffer::EventTraceBuffer(int64_t trace_id, bool repair)
    : trace_id_(trace_id), repair_(repair) {
  metadata_.trace_id = trace_id;
  events_.reserve(32);  // one allocation instead of a growth chain for most traces
}

void EventTraceBuffer::set_metadata(const TraceMetadataInfo& metadata) {
  if (metadata_records_++ == 0) metadata_ = metadata;
}

void EventTraceBuffer::add_event(const FlowEvent& event) {
  if (!events_.empty() && event.order_index < events_.back().order_index) {
    arrived_in_order_ = false;
  }
  events_.push_back(event);
  max_order_index_ = std::max<int64_t>(max_order_index_, event.order_index);
  last_timestamp_ = std::max(last_timestamp_, event.timestamp);
  switch (event.kind) {
    case FlowEventKind::kBefore:
      if (event.order_index == 0) saw_entry_ = true;
      ++open_;
      if (repair_) open_stack_.push_back({event.operation, event.component});
      break;
    case FlowEventKind::kAfter:
    case FlowEventKind::kAfterFailed:
      --open_;
      if (repair_) {
        // Pop up to and including the matching before; the ones above it get
        // synthetic after events. No match: leave the stack as it is, so the
        // trace stays open and build() reports the stray after event.
        for (size_t i = open_stack_.size(); i-- > 0;) {
          if (same_operation(open_stack_[i].operation, open_stack_[i].component, event.operation,
                             event.component)) {
            open_stack_.resize(i);
            break;
          }
        }
      }
      break;
    case FlowEventKind::kOther:
      break;
  }
}

bool EventTraceBuffer::is_complete() const {
  const bool balanced = repair_ ? open_stack_.empty() : open_ == 0;
  return metadata_records_ == 1 && saw_entry_ && balanced && !events_.empty() &&
         max_order_index_ + 1 == static_cast<int64_t>(events_.size());
}

TraceBuildResult EventTraceBuffer::build(bool close_open_executions) const {
  TraceBuildResult result;
  Trace& trace = result.trace;
  trace.trace_id = trace_id_;
  trace.thread_id = metadata_.thread_id;
  trace.host = metadata_.host;
  trace.session = metadata_.session;
  trace.parent_trace_id = metadata_records_ > 0 ? metadata_.parent_trace_id : trace_id_;
  trace.parent_order_id = metadata_.parent_order_id;
  trace.origin = TraceOrigin::kFlowEvents;
  auto& problems = result.problems;

  if (metadata_records_ == 0) {
    add_problem(problems, TraceProblemKind::kNoTraceMetadata, "no TraceMetadata");
  } else if (metadata_records_ > 1) {
    add_problem(problems, TraceProblemKind::kDuplicateTraceMetadata,
                std::to_string(metadata_records_) + " TraceMetadata records");
  }
  if (!saw_entry_) {
    add_problem(problems, TraceProblemKind::kNoEntryEvent, "no before event with order index 0");
  }

  // Order-index order; a stable sort keeps duplicates in arrival order.
  // Events almost always arrive in order, so the sort is usually skipped.
  std::vector<uint32_t> order;
  if (!arrived_in_order_) {
    order.resize(events_.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return events_[a].order_index < events_[b].order_index;
    });
  }
  trace.executions.reserve(events_.size() / 2 + 1);

  std::vector<uint32_t> stack;  // indices into trace.executions
  int64_t expected = 0;
  for (size_t position = 0; position < events_.size(); ++position) {
    const FlowEvent& e = events_[order.empty() ? position : order[position]];
    if (e.order_index < expected) {
      // Like Kieker, an event with an index already used is ignored.
      add_problem(problems,
                  e.order_index < 0 ? TraceProblemKind::kOrderIndexGap
                                    : TraceProblemKind::kDuplicateOrderIndex,
                  (e.order_index < 0 ? "negative order index " : "duplicate order index ") +
                      std::to_string(e.order_index));
      continue;
    }
    if (e.order_index > expected) {
      add_problem(problems, TraceProblemKind::kOrderIndexGap,
                  "order index gap at " + std::to_string(expected) +
                      (e.order_index - expected > 1
                           ? " (" + std::to_string(e.order_index - expected) + " missing)"
                           : std::string()));
    }
    expected = int64_t{e.order_index} + 1;

    if (e.kind == FlowEventKind::kBefore) {
      Execution x;
      x.operation = e.operation;
      x.component = e.component.empty() ? class_of_signature(e.operation) : e.component;
      x.host = metadata_.host;
      x.tin = e.timestamp;
      x.tout = -1;
      x.order_index = e.order_index;
      x.eoi = static_cast<int32_t>(trace.executions.size());
      x.ess = static_cast<int32_t>(stack.size());
      stack.push_back(static_cast<uint32_t>(trace.executions.size()));
      trace.executions.push_back(x);
      continue;
    }
    if (e.kind == FlowEventKind::kOther) continue;

    if (stack.empty()) {
      add_problem(problems, TraceProblemKind::kUnmatchedAfterEvent,
                  "after event for " + describe(e) + " with no open before event");
      continue;
    }
    // Before and after must name the same operation and class; an empty
    // class signature is derived from the operation on both sides alike.
    const std::string_view component =
        e.component.empty() ? class_of_signature(e.operation) : e.component;
    auto matches = [&](uint32_t exec) {
      const Execution& x = trace.executions[exec];
      return same_text(x.operation, e.operation) && same_text(x.component, component);
    };
    size_t match = stack.size() - 1;
    if (!matches(stack[match])) {
      bool found = false;
      if (repair_) {
        for (size_t i = stack.size() - 1; i-- > 0;) {
          if (matches(stack[i])) {
            match = i;
            found = true;
            break;
          }
        }
      }
      if (!found) {
        add_problem(problems, TraceProblemKind::kMismatchedAfterEvent,
                    "after event for " + describe(e) + " while op " +
                        std::string(trace.executions[stack.back()].operation) + " is open");
        continue;
      }
      for (size_t i = match + 1; i < stack.size(); ++i) {
        Execution& repaired = trace.executions[stack[i]];
        repaired.tout = e.timestamp;
        repaired.exit_order_index = e.order_index;
        repaired.repaired = true;
      }
    }
    Execution& closed = trace.executions[stack[match]];
    closed.tout = e.timestamp;
    closed.exit_order_index = e.order_index;
    closed.failed = e.kind == FlowEventKind::kAfterFailed;
    closed.cause = e.cause;
    stack.resize(match);
  }

  for (uint32_t exec : stack) {
    Execution& x = trace.executions[exec];
    if (close_open_executions) {
      x.tout = last_timestamp_;
      x.repaired = true;
    } else {
      add_problem(problems, TraceProblemKind::kMissingAfterEvent,
                  "missing after event for op " + std::string(x.operation) + " (eoi " +
                      std::to_string(x.eoi) + ")");
    }
  }
  if (trace.executions.empty()) {
    add_problem(problems, TraceProblemKind::kNoExecutions, "no before events");
  }
  return result;
}

}  // namespace sonde::analysis
