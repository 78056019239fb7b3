#include "analysis/reconstruct/execution_record_buffer.hpp"

#include <algorithm>
#include <string>
#include <tuple>

namespace sonde::analysis {

ExecutionRecordBuffer::ExecutionRecordBuffer(int64_t trace_id) : trace_id_(trace_id) {}

void ExecutionRecordBuffer::add(const Execution& execution, std::string_view session) {
  if (executions_.empty()) session_ = session;
  if (execution.eoi == 0 && execution.ess == 0) saw_entry_ = true;
  max_eoi_ = std::max<int64_t>(max_eoi_, execution.eoi);
  last_timestamp_ = std::max(last_timestamp_, execution.tout);
  executions_.push_back(execution);
}

bool ExecutionRecordBuffer::complete_on_entry() const {
  return saw_entry_ && max_eoi_ + 1 <= static_cast<int64_t>(executions_.size());
}

TraceBuildResult ExecutionRecordBuffer::build() const {
  TraceBuildResult result;
  Trace& trace = result.trace;
  trace.trace_id = trace_id_;
  trace.session = session_;
  trace.parent_trace_id = trace_id_;
  trace.parent_order_id = -1;
  trace.origin = TraceOrigin::kExecutionRecords;
  trace.executions = executions_;
  // Kieker's ExecutionTrace order: eoi, then ess, tin, tout.
  std::stable_sort(
      trace.executions.begin(), trace.executions.end(), [](const Execution& a, const Execution& b) {
        return std::tie(a.eoi, a.ess, a.tin, a.tout) < std::tie(b.eoi, b.ess, b.tin, b.tout);
      });
  auto& problems = result.problems;
  if (trace.executions.empty()) {
    add_problem(problems, TraceProblemKind::kNoExecutions, "no executions");
    return result;
  }
  trace.host = trace.executions.front().host;

  const Execution& first = trace.executions.front();
  if (first.eoi != 0) {
    add_problem(problems, TraceProblemKind::kEoiGap,
                "eoi gap at 0 (first eoi is " + std::to_string(first.eoi) + ")");
  }
  if (first.ess != 0) {
    add_problem(problems, TraceProblemKind::kBadEntryEss,
                "first execution " + std::string(first.operation) + " has ess " +
                    std::to_string(first.ess) + ", expected 0");
  }
  for (size_t i = 1; i < trace.executions.size(); ++i) {
    const Execution& prev = trace.executions[i - 1];
    const Execution& cur = trace.executions[i];
    if (cur.eoi == prev.eoi) {
      add_problem(problems, TraceProblemKind::kDuplicateEoi,
                  "duplicate eoi " + std::to_string(cur.eoi));
      continue;
    }
    if (cur.eoi != prev.eoi + 1) {
      add_problem(problems, TraceProblemKind::kEoiGap,
                  "eoi gap at " + std::to_string(prev.eoi + 1) + " (next eoi is " +
                      std::to_string(cur.eoi) + ")");
    }
    if (cur.ess > prev.ess + 1 || cur.ess < 0) {
      add_problem(problems, TraceProblemKind::kEssJump,
                  "ess jumps from " + std::to_string(prev.ess) + " to " + std::to_string(cur.ess) +
                      " at eoi " + std::to_string(cur.eoi) + " (op " + std::string(cur.operation) +
                      ")");
    }
  }
  return result;
}

}  // namespace sonde::analysis
