// Per-operation response-time statistics over valid traces: inclusive time
// (tout - tin) and exclusive time (inclusive minus the direct callees'
// inclusive times), each with exact quantiles (distribution.hpp).
// Keeps every sample (two int64 per execution) until results() is called.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/distribution.hpp"
#include "analysis/operation_key.hpp"
#include "analysis/trace_model.hpp"

namespace sonde::analysis {

struct OperationStats {
  OperationKey key;
  uint64_t count = 0;
  uint64_t failed = 0;
  DistributionSummary inclusive;
  DistributionSummary exclusive;
};

class OperationStatistics : public TraceSink {
 public:
  explicit OperationStatistics(AggregationLevel level = AggregationLevel::kAssembly);

  void add(const Trace& trace);
  void on_trace(const Trace& trace) override { add(trace); }
  void on_invalid_trace(const InvalidTrace&) override {}

  // One entry per operation, sorted by total inclusive time, largest first
  // (ties: by key, so the order is deterministic).
  std::vector<OperationStats> results() const;

  AggregationLevel level() const { return level_; }

 private:
  struct Samples {
    uint64_t failed = 0;
    std::vector<int64_t> inclusive;
    std::vector<int64_t> exclusive;
  };
  AggregationLevel level_;
  std::unordered_map<OperationKey, Samples, OperationKeyHash> by_operation_;
};

}  // namespace sonde::analysis
