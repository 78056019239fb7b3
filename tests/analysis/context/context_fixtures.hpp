// Builders for calling-context tests: traces as nested operation lists with
// durations, and random trees for the property tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/context/context_collector.hpp"

namespace sonde::test {

// One execution of a trace in pre-order: operation, depth (0 = root), duration.
struct Call {
  std::string op;
  int depth;
  int64_t duration;
};

inline void add_trace(analysis::ContextCollector& c, const std::vector<Call>& calls,
                      int64_t trace_id) {
  std::vector<std::string_view> ops;
  std::vector<int32_t> parent;
  std::vector<int64_t> durations;
  std::vector<int32_t> open;  // open[d] = last execution at depth d
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto d = static_cast<size_t>(calls[i].depth);
    open.resize(d + 1);
    open[d] = static_cast<int32_t>(i);
    parent.push_back(d == 0 ? -1 : open[d - 1]);
    ops.push_back(calls[i].op);
    durations.push_back(calls[i].duration);
  }
  c.add_tree(ops, parent, durations, trace_id);
}

// A random trace over `ops` operations: up to `max_size` calls, depth <= 5,
// durations depending on operation and a random factor.
inline std::vector<Call> random_trace(std::mt19937_64& rng, int ops, int max_size) {
  std::uniform_int_distribution<int> op(0, ops - 1), size(1, max_size), dur(1, 1000);
  const int n = size(rng);
  std::vector<Call> calls;
  int depth = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0)
      depth = std::uniform_int_distribution<int>(i == 0 ? 0 : 1, std::min(depth + 1, 5))(rng);
    const int o = op(rng);
    calls.push_back({"op" + std::to_string(o), depth, (o + 1) * 100 + dur(rng)});
  }
  return calls;
}

}  // namespace sonde::test
