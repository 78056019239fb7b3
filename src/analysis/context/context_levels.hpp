// Per-level statistics of the calling-context partitions: how many
// contexts, how much of the response-time spread they explain, and whether
// multi-modality remains.
//
// Weighting (the paper leaves the system-level "average standard deviation"
// open; this is reading A of the research digest): over all executions N,
//   σ̄(level) = Σ_contexts c (n_c / N) · σ_c      (σ = population σ)
// and the reduction is 1 - σ̄(level) / σ̄(operation), where σ̄(operation) is
// the same sum over operations. Per operation the sum runs over that
// operation's contexts with weights n_c / n_op, the paper's Section 3.3
// metric. Executions of big-spread operations therefore dominate the
// system-level figure. Singleton contexts have σ = 0 and inflate the
// reduction (the trace level has many); the CCT model (context_tree.hpp)
// links them to an ancestor instead, so compare with its figure too.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/context/context_data.hpp"

namespace sonde::analysis {

// The durations laid out so that every context of every level is one
// contiguous range: trace contexts sorted by (operation, caller, stack).
struct ContextIndex {
  std::vector<int64_t> durations;
  // Per level, per context id: [begin, end) into durations.
  std::array<std::vector<uint64_t>, kContextLevels> begin, end;

  explicit ContextIndex(const ContextData& data);
  std::span<const int64_t> samples(ContextLevel level, uint32_t id) const {
    const auto l = static_cast<size_t>(level);
    return {durations.data() + begin[l][id], durations.data() + end[l][id]};
  }
  uint64_t count(ContextLevel level, uint32_t id) const {
    const auto l = static_cast<size_t>(level);
    return end[l][id] - begin[l][id];
  }
};

struct LevelStats {
  size_t contexts = 0;
  size_t singleton_contexts = 0;  // n = 1 (σ = 0 by definition)
  uint64_t observations = 0;
  double weighted_sd = 0;        // σ̄ as above, ns
  double reduction_percent = 0;  // against the operation level
  // Share of the executions (percent) in contexts with at least
  // kMinBimodalitySample executions whose bimodality coefficient > 5/9.
  double bimodal_percent = 0;
  double mean_observations() const {
    return contexts == 0 ? 0.0 : static_cast<double>(observations) / static_cast<double>(contexts);
  }
};
inline constexpr uint64_t kMinBimodalitySample = 10;

struct OperationContextStats {
  uint32_t op = 0;
  double bimodality = 0;  // of all its executions
  std::array<LevelStats, kContextLevels> levels;
};

struct ContextLevelReport {
  std::array<LevelStats, kContextLevels> levels;
  std::vector<OperationContextStats> operations;  // by operation id
};

ContextLevelReport summarize_levels(const ContextData& data, const ContextIndex& index);

// Σ w_c σ_c / Σ w_c over the given moments (the weighted σ of one partition).
double weighted_sd(std::span<const Moments> classes);

}  // namespace sonde::analysis
