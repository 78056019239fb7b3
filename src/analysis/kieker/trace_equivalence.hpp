// Kieker's trace equivalence classes (traceAssemblyEquivClasses.txt,
// traceDeploymentEquivClasses.txt): two traces are equivalent when they
// have the same executions in the same order - the same operation, of the
// same assembly component (assembly level) or of the same component on the
// same host (deployment level), at the same eoi and ess. Timings do not
// count. Streaming: per class only its key, its first trace (the
// representative, as in Kieker) and a count are kept.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/kieker/kieker_trace.hpp"
#include "analysis/model/operation_key.hpp"

namespace sonde::analysis {

struct EquivalenceClass {
  int64_t representative = 0;  // trace id of the first trace of the class
  uint64_t cardinality = 0;    // traces in the class
  size_t executions = 0;
  int32_t max_ess = -1;
};

class TraceEquivalenceClasses {
 public:
  explicit TraceEquivalenceClasses(AggregationLevel level) : level_(level) {}

  void add(const KiekerTrace& trace);

  // In order of their first trace.
  const std::vector<EquivalenceClass>& classes() const { return classes_; }
  AggregationLevel level() const { return level_; }

 private:
  struct KeyHash {
    size_t operator()(const std::vector<int32_t>& key) const noexcept;
  };

  AggregationLevel level_;
  std::vector<EquivalenceClass> classes_;
  // (operation, component, eoi, ess) of each execution -> index in classes_
  std::unordered_map<std::vector<int32_t>, size_t, KeyHash> index_;
};

// One line per class, as Kieker prints them:
// "Class 0 ; cardinality: 1635; # executions: 4; representative: 6488138950668976129;
// max. stack depth: 2".
std::string equivalence_classes_text(const TraceEquivalenceClasses& classes);

}  // namespace sonde::analysis
