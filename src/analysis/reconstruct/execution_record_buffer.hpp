// Buffers the OperationExecutionRecords of one trace id. Each record is one
// finished execution with its eoi/ess, so a trace is an eoi-sorted list and
// only needs checking (Kieker's ExecutionTrace.toMessageTrace rules): eois
// exactly 0..n-1, the eoi-0 execution at ess 0, and ess growing by at most 1
// from one execution to the next.
//
// Records are written when an execution ends, so the entry (eoi 0, ess 0)
// comes last within its thread; complete_on_entry() uses that to close a
// trace without waiting for the end of the log.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/trace_build_result.hpp"

namespace sonde::analysis {

class ExecutionRecordBuffer {
 public:
  explicit ExecutionRecordBuffer(int64_t trace_id);

  void add(const Execution& execution, std::string_view session);

  // The entry execution has arrived and the eois seen so far cover 0..max
  // (counting duplicates, which build() then reports).
  bool complete_on_entry() const;

  TraceBuildResult build() const;

  int64_t trace_id() const { return trace_id_; }
  int64_t last_timestamp() const { return last_timestamp_; }
  uint64_t records() const { return executions_.size(); }

 private:
  int64_t trace_id_;
  std::string_view session_;
  bool saw_entry_ = false;
  int64_t max_eoi_ = -1;
  int64_t last_timestamp_ = INT64_MIN;
  std::vector<Execution> executions_;
};

}  // namespace sonde::analysis
