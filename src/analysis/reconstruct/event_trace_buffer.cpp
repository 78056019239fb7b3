#include "analysis/reconstruct/event_trace_buffer.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "analysis/reconstruct/flow_event_pool.hpp"
#include "analysis/reconstruct/flow_trace_builder.hpp"

namespace sonde::analysis {
namespace {

bool same_operation(std::string_view op_a, std::string_view cls_a, std::string_view op_b,
                    std::string_view cls_b) {
  return op_a == op_b && cls_a == cls_b;
}

}  // namespace

EventTraceBuffer::EventTraceBuffer(int64_t trace_id, bool repair, std::vector<FlowEvent> storage)
    : trace_id_(trace_id), repair_(repair), events_(std::move(storage)) {
  metadata_.trace_id = trace_id;
  events_.clear();
  // One allocation instead of a growth chain for most traces (none when
  // the storage is a closed trace's).
  if (events_.capacity() < 32) events_.reserve(32);
}

std::vector<FlowEvent> EventTraceBuffer::take_storage() {
  events_.clear();
  return std::move(events_);
}

void EventTraceBuffer::set_metadata(const TraceMetadataInfo& metadata) {
  if (metadata_records_++ == 0) metadata_ = metadata;
}

void EventTraceBuffer::add_event(const FlowEvent& event, FlowEventPool* pool) {
  if (!events_.empty() && event.order_index < events_.back().order_index) {
    arrived_in_order_ = false;
  }
  if (pool != nullptr && events_.size() == events_.capacity()) pool->grow(events_);
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
    case FlowEventKind::kCall:
      if (event.order_index == 0) saw_call_entry_ = true;
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

void start_flow_trace(const TraceMetadataInfo& metadata, TraceBuildResult& result) {
  std::vector<Execution> storage = std::move(result.trace.executions);
  storage.clear();
  result = TraceBuildResult{};
  result.trace.executions = std::move(storage);
  Trace& trace = result.trace;
  trace.trace_id = metadata.trace_id;
  trace.thread_id = metadata.thread_id;
  trace.host = metadata.host;
  trace.session = metadata.session;
  trace.parent_trace_id = metadata.parent_trace_id;
  trace.parent_order_id = metadata.parent_order_id;
  trace.w3c = metadata.w3c;
  trace.origin = TraceOrigin::kFlowEvents;
}

void EventTraceBuffer::build(bool close_open_executions, TraceBuildResult& result) const {
  start_flow_trace(metadata_, result);
  Trace& trace = result.trace;
  trace.trace_id = trace_id_;
  if (metadata_records_ == 0) trace.parent_trace_id = trace_id_;
  auto& problems = result.problems;

  if (metadata_records_ == 0) {
    add_problem(problems, TraceProblemKind::kNoTraceMetadata, "no TraceMetadata");
  } else if (metadata_records_ > 1) {
    add_problem(problems, TraceProblemKind::kDuplicateTraceMetadata,
                std::to_string(metadata_records_) + " TraceMetadata records");
  }
  // A trace may begin with a call from an uninstrumented caller (Kieker).
  if (!saw_entry_ && !saw_call_entry_) {
    add_problem(problems, TraceProblemKind::kNoEntryEvent,
                "no before or call event with order index 0");
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

  FlowTraceBuilder builder(trace, problems, repair_);
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
    builder.add(e);
  }
  builder.finish(close_open_executions, last_timestamp_);
  if (trace.executions.empty()) {
    add_problem(problems, TraceProblemKind::kNoExecutions, "no before or call events");
  }
}

}  // namespace sonde::analysis
