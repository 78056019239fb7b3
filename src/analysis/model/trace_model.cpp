#include "analysis/model/trace_model.hpp"

#include <algorithm>

namespace sonde::analysis {

int64_t Trace::start_time() const {
  if (executions.empty()) return 0;
  int64_t t = executions.front().tin;
  for (const Execution& e : executions) t = std::min(t, e.tin);
  return t;
}

int64_t Trace::end_time() const {
  if (executions.empty()) return 0;
  int64_t t = executions.front().tout;
  for (const Execution& e : executions) t = std::max(t, e.tout);
  return t;
}

std::string_view to_string(TraceProblemKind kind) {
  switch (kind) {
    case TraceProblemKind::kNoTraceMetadata:
      return "no-trace-metadata";
    case TraceProblemKind::kDuplicateTraceMetadata:
      return "duplicate-trace-metadata";
    case TraceProblemKind::kNoEntryEvent:
      return "no-entry-event";
    case TraceProblemKind::kMissingAfterEvent:
      return "missing-after-event";
    case TraceProblemKind::kUnmatchedAfterEvent:
      return "unmatched-after-event";
    case TraceProblemKind::kMismatchedAfterEvent:
      return "mismatched-after-event";
    case TraceProblemKind::kOrderIndexGap:
      return "order-index-gap";
    case TraceProblemKind::kDuplicateOrderIndex:
      return "duplicate-order-index";
    case TraceProblemKind::kNoExecutions:
      return "no-executions";
    case TraceProblemKind::kEoiGap:
      return "eoi-gap";
    case TraceProblemKind::kDuplicateEoi:
      return "duplicate-eoi";
    case TraceProblemKind::kBadEntryEss:
      return "bad-entry-ess";
    case TraceProblemKind::kEssJump:
      return "ess-jump";
  }
  return "unknown";
}

std::string_view to_string(CloseCause cause) {
  switch (cause) {
    case CloseCause::kEndOfInput:
      return "end-of-input";
    case CloseCause::kTimeout:
      return "timeout";
    case CloseCause::kEvicted:
      return "evicted";
    case CloseCause::kComplete:
      return "complete";
  }
  return "unknown";
}

}  // namespace sonde::analysis
