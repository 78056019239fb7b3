// Collects ContextData from reconstructed traces: a TraceSink for
// TraceAnalysis::add_sink. Only valid traces whose executions all have an
// exit contribute (a response time needs both ends); the others are counted
// in skipped_traces. Memory: one 40-byte ContextObservation per execution
// (80 MB for 2 M executions) plus one copy per distinct trace shape.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/context/context_data.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

// Two 32-bit ids as one hash-map key (caller pairs, stack parents).
inline uint64_t context_pair_key(uint32_t a, uint32_t b) {
  return (static_cast<uint64_t>(a) << 32) | b;
}

struct U32VectorHash {
  size_t operator()(const std::vector<uint32_t>& v) const noexcept;
};

class ContextCollector : public TraceSink {
 public:
  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace&) override { ++data_.skipped_traces; }

  // Adds one trace given as pre-order operations, parents and durations
  // (what on_trace derives from eoi/ess); used by tests and the study.
  void add_tree(const std::vector<std::string_view>& ops, const std::vector<int32_t>& parent,
                const std::vector<int64_t>& durations, int64_t trace_id);

  ContextData take() { return std::move(data_); }

 private:
  uint32_t intern_operation(std::string_view name);
  uint32_t intern_pair(std::unordered_map<uint64_t, uint32_t>& map, uint32_t a, uint32_t b,
                       std::vector<uint32_t>& first, std::vector<uint32_t>& second);

  ContextData data_;
  // Transparent lookup: finding a known name allocates nothing.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> operation_ids_;
  std::unordered_map<uint64_t, uint32_t> caller_ids_;  // (op, caller op)
  std::unordered_map<uint64_t, uint32_t> stack_ids_;   // (op, parent stack)
  std::unordered_map<std::vector<uint32_t>, uint32_t, U32VectorHash> shape_ids_;
  // Scratch, reused across traces.
  std::vector<uint32_t> ops_, stacks_, key_;
};

}  // namespace sonde::analysis
