// Finds the execution of a trace that was current at a given moment: at a
// Kieker order index (a continued trace's parentOrderId, or the orderIndex
// of a callable record such as sonde.record.DatabaseCall) or, when a trace
// has no order indexes (OperationExecutionRecords), at a timestamp.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

class ExecutionLookup {
 public:
  // `trace` must outlive the lookup; its executions must be in eoi order.
  explicit ExecutionLookup(const Trace& trace);

  // Index of the innermost execution open right after the event with this
  // order index: the execution it opened (a before event) or the caller of
  // the one it closed (an after event). -1 if none (index out of range, or
  // the trace has no order indexes).
  int32_t current_at_order_index(int32_t order_index) const;

  // Index of the innermost execution whose [tin, tout] contains `time`;
  // the root (0) if none does, -1 for an empty trace.
  int32_t innermost_at_time(int64_t time) const;

  // Index of the caller of execution `i`, -1 for the entry.
  int32_t parent(int32_t i) const { return parents_[static_cast<size_t>(i)]; }

  bool has_order_indexes() const { return has_order_indexes_; }

 private:
  const Trace& trace_;
  std::vector<int32_t> parents_;
  bool has_order_indexes_ = false;
};

}  // namespace sonde::analysis
