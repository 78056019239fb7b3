#include "analysis/operation_statistics.hpp"

#include <algorithm>
#include <tuple>

#include "analysis/call_tree.hpp"

namespace sonde::analysis {

OperationStatistics::OperationStatistics(AggregationLevel level) : level_(level) {}

void OperationStatistics::add(const Trace& trace) {
  const CallTree tree = build_call_tree(trace);
  const std::vector<int64_t> exclusive = exclusive_durations(trace, tree);
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const Execution& e = trace.executions[i];
    Samples& s = by_operation_[operation_key(e, level_)];
    if (e.failed) ++s.failed;
    s.inclusive.push_back(e.duration());
    s.exclusive.push_back(exclusive[i]);
  }
}

std::vector<OperationStats> OperationStatistics::results() const {
  std::vector<OperationStats> out;
  out.reserve(by_operation_.size());
  for (const auto& [key, samples] : by_operation_) {
    OperationStats s;
    s.key = key;
    s.count = samples.inclusive.size();
    s.failed = samples.failed;
    std::vector<int64_t> copy = samples.inclusive;
    s.inclusive = summarize(copy);
    copy = samples.exclusive;
    s.exclusive = summarize(copy);
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
