// Counts valid and invalid traces, aggregates why traces were invalid (by the
// main problem of each), and summarises the durations of valid traces.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/duration_accumulator.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct ProblemCount {
  TraceProblemKind kind;
  uint64_t traces = 0;  // invalid traces whose main problem is of this kind
  std::string example;  // detail of the first such trace
  int64_t example_trace_id = -1;
};

struct TraceCounts {
  uint64_t valid = 0;
  uint64_t invalid = 0;
  uint64_t executions = 0;                      // in valid traces
  uint64_t failed_executions = 0;               // in valid traces
  uint64_t repaired_traces = 0;                 // valid traces with at least one synthesised exit
  int32_t max_depth = 0;                        // deepest ess + 1 seen in a valid trace
  std::array<uint64_t, 4> invalid_closed_by{};  // indexed by CloseCause
  std::vector<ProblemCount> problems;           // sorted by count, largest first
  DistributionSummary durations;                // of valid traces, end - start
};

class TraceSummaryCollector : public TraceSink {
 public:
  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override;

  TraceCounts results() const;

 private:
  TraceCounts counts_;
  DurationAccumulator durations_;
};

}  // namespace sonde::analysis
