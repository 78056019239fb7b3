// Per-operation response-time statistics over valid traces: inclusive time
// (tout - tin) and exclusive time (inclusive minus the direct callees'
// inclusive times). Memory per operation is bounded (duration_accumulator.hpp):
// quantiles are exact up to 16384 executions of an operation, within 0.4 %
// beyond.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/model/duration_accumulator.hpp"
#include "analysis/model/operation_key.hpp"
#include "analysis/model/trace_model.hpp"

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
    DurationAccumulator inclusive;
    DurationAccumulator exclusive;
  };
  AggregationLevel level_;
  std::unordered_map<OperationKey, Samples, OperationKeyHash> by_operation_;
  Samples& samples_for(const OperationKey& key);

  // Direct-mapped cache in front of by_operation_, indexed by the operation
  // string's address (interned strings repeat their address) and verified by
  // content: most executions skip hashing the key's strings.
  struct CacheEntry {
    OperationKey key;
    Samples* samples = nullptr;
  };
  std::array<CacheEntry, 64> cache_{};
  std::vector<int64_t> exclusive_;  // scratch, reused for every trace
  std::vector<int32_t> open_;       // scratch: indices of the executions on the call stack
};

}  // namespace sonde::analysis
