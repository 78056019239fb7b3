#include "analysis/model/operation_statistics.hpp"

#include <algorithm>
#include <tuple>

namespace sonde::analysis {

OperationStatistics::OperationStatistics(AggregationLevel level) : level_(level) {}

void OperationStatistics::add(const Trace& trace) {
  // Exclusive times with the parent rule of build_call_tree (call_tree.hpp),
  // in scratch vectors: this runs once per trace on the analysis' hot path.
  const size_t n = trace.executions.size();
  exclusive_.resize(n);
  open_.clear();
  for (size_t i = 0; i < n; ++i) {
    const Execution& e = trace.executions[i];
    exclusive_[i] = e.duration();
    const size_t depth = e.ess < 0 ? 0 : static_cast<size_t>(e.ess);
    if (open_.size() > depth) open_.resize(depth);
    if (!open_.empty()) {
      exclusive_[open_.back()] = saturating_span(e.duration(), exclusive_[open_.back()]);
    }
    open_.push_back(static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    const Execution& e = trace.executions[i];
    Samples& s = samples_for(operation_key(e, level_));
    if (e.failed) ++s.failed;
    s.inclusive.add(e.duration());
    s.exclusive.add(exclusive_[i]);
  }
}

OperationStatistics::Samples& OperationStatistics::samples_for(const OperationKey& key) {
  CacheEntry& entry =
      cache_[(reinterpret_cast<uintptr_t>(key.operation.data()) >> 4) % cache_.size()];
  if (entry.samples != nullptr && entry.key == key) return *entry.samples;
  Samples& samples = by_operation_[key];  // node-based: the address stays valid
  entry = {key, &samples};
  return samples;
}

std::vector<OperationStats> OperationStatistics::results() const {
  std::vector<OperationStats> out;
  out.reserve(by_operation_.size());
  for (const auto& [key, samples] : by_operation_) {
    OperationStats s;
    s.key = key;
    s.count = samples.inclusive.count();
    s.failed = samples.failed;
    s.inclusive = samples.inclusive.summary();
    s.exclusive = samples.exclusive.summary();
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const OperationStats& a, const OperationStats& b) {
    if (a.inclusive.total != b.inclusive.total) return a.inclusive.total > b.inclusive.total;
    return std::tie(a.key.operation, a.key.component, a.key.host) <
           std::tie(b.key.operation, b.key.component, b.key.host);
  });
  return out;
}

}  // namespace sonde::analysis
