#include "analysis/kieker/trace_equivalence.hpp"

namespace sonde::analysis {

size_t TraceEquivalenceClasses::KeyHash::operator()(
    const std::vector<int32_t>& key) const noexcept {
  size_t h = key.size();
  for (int32_t v : key) {
    // boost::hash_combine's mixing step.
    h ^=
        static_cast<size_t>(static_cast<uint32_t>(v)) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

void TraceEquivalenceClasses::add(const KiekerTrace& trace) {
  std::vector<int32_t> key;
  key.reserve(trace.executions.size() * 4);
  for (const KiekerExecution& k : trace.executions) {
    key.push_back(k.ids.operation);
    key.push_back(level_ == AggregationLevel::kAssembly ? k.ids.assembly : k.ids.allocation);
    key.push_back(k.execution->eoi);
    key.push_back(k.execution->ess);
  }
  auto [it, inserted] = index_.try_emplace(std::move(key), classes_.size());
  if (inserted) {
    classes_.push_back({trace.trace->trace_id, 0, trace.executions.size(), trace.max_ess});
  }
  ++classes_[it->second].cardinality;
}

std::string equivalence_classes_text(const TraceEquivalenceClasses& classes) {
  std::string out;
  size_t n = 0;
  for (const EquivalenceClass& c : classes.classes()) {
    out += "Class " + std::to_string(n++) + " ; cardinality: " + std::to_string(c.cardinality) +
           "; # executions: " + std::to_string(c.executions) +
           "; representative: " + std::to_string(c.representative) +
           "; max. stack depth: " + std::to_string(c.max_ess) + "\n";
  }
  return out;
}

}  // namespace sonde::analysis
