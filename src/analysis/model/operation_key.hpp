// What counts as "the same operation" when executions are aggregated.
// Kieker distinguishes two levels: assembly (component type + operation) and
// deployment (the same on one host: execution container + component +
// operation). Both are kept here so graphs and statistics can use either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

enum class AggregationLevel : uint8_t { kAssembly, kDeployment };

std::string_view to_string(AggregationLevel level);  // "assembly" / "deployment"
bool parse_aggregation_level(std::string_view text, AggregationLevel* out);

struct OperationKey {
  std::string_view host;  // empty on the assembly level
  std::string_view component;
  std::string_view operation;

  bool operator==(const OperationKey&) const = default;
};

struct OperationKeyHash {
  size_t operator()(const OperationKey& k) const noexcept;
};

OperationKey operation_key(const Execution& e, AggregationLevel level);

// Count and inclusive-time totals of a group of executions.
struct TimeAccumulator {
  uint64_t count = 0;
  uint64_t failed = 0;
  int64_t total = 0;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();

  void add(int64_t duration, bool was_failed) {
    ++count;
    if (was_failed) ++failed;
    total = saturating_add(total, duration);
    if (duration < min) min = duration;
    if (duration > max) max = duration;
  }
  double mean() const {
    return count ? static_cast<double>(total) / static_cast<double>(count) : 0;
  }
};

}  // namespace sonde::analysis
