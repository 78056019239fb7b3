// A saved calling-context model used as the baseline for a later log: which
// contexts got slower (or faster), decided by a rank test per model entity.
//
// Contexts are matched across logs by stable 64-bit keys derived from
// operation names (ids differ between logs): an operation by its name, a
// caller context by (operation, caller), a stack context by its root path, a
// trace context by its call-tree shape and position. Every key is a hash
// chain, so keys cost O(1) per context even for deep traces; two different
// contexts share a key with probability ~n²/2⁶⁵ (n contexts).
//
// The model's leaves partition the baseline's trace contexts, so each
// execution of the new log whose trace context the baseline saw belongs to
// exactly one leaf. The check runs per model entity: a leaf, or an ancestor
// with the small leaves linked to it. Within an entity each leaf is compared
// with its own baseline executions (like with like) and the leaves are
// combined as strata (context_regression.hpp): comparing the pooled leaves
// instead would flag a change whenever the new log merely calls the
// entity's call trees in other proportions. Executions in trace contexts
// the baseline never saw have nothing like them; they are counted per
// operation, as are operations the baseline does not know.
//
// File format: docs/formats/context-model.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/context/context_data.hpp"
#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_tree.hpp"
#include "format/context_fences.hpp"

namespace sonde::analysis {

using format::kContextModelFormat;

// One distribution of the baseline: a model leaf, a model entity or a
// whole operation.
struct BaselineReference {
  ContextLevel level = ContextLevel::kOperation;
  uint32_t entity = 0;  // the reference of its model entity (itself for entities and operations)
  std::string operation;
  std::string context;  // for people (ContextData::describe)
  uint64_t n = 0;
  double median = 0, q1 = 0, q3 = 0, mean = 0, sd = 0;
  // Evenly spaced order statistics of its durations (all of them
  // when n <= the sample size): the rank test's stand-in for the baseline.
  std::vector<int64_t> sample;
};

// A baseline trace context and the leaf (reference) it belongs to.
struct BaselineTraceContext {
  uint64_t key = 0;
  uint32_t reference = 0;
};

struct ContextBaseline {
  std::string source;  // the log it was built from
  uint64_t executions = 0, traces = 0;
  ContextTreeOptions options;
  size_t sample_size = 0;
  std::vector<BaselineReference> references;
  std::vector<BaselineTraceContext> trace_contexts;
  std::vector<uint32_t> operation_reference;  // by operation, into references
  std::vector<std::string> operation_names;   // same order
};

inline constexpr size_t kDefaultBaselineSample = 200;

// Stable keys of every context of `data`, per level, indexed by context id.
struct ContextKeys {
  std::array<std::vector<uint64_t>, kContextLevels> keys;
  explicit ContextKeys(const ContextData& data);
};

ContextBaseline make_baseline(const ContextData& data, const ContextIndex& index,
                              const ContextTree& tree, const ContextTreeOptions& options,
                              std::string source, size_t sample_size = kDefaultBaselineSample);

// JSON (docs/formats/context-model.md), streamed.
void write_baseline(std::ostream& out, const ContextBaseline& baseline);
// Throws std::runtime_error naming the first problem (wrong format tag,
// missing or mistyped field, reference out of range).
ContextBaseline baseline_from_json(const nlohmann::json& doc);

}  // namespace sonde::analysis
