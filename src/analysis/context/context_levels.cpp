#include "analysis/context/context_levels.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace sonde::analysis {

ContextIndex::ContextIndex(const ContextData& data) {
  const size_t traces = data.contexts(ContextLevel::kTrace);
  // Count per trace context, then order the trace contexts so that each
  // coarser context's trace contexts are adjacent.
  std::vector<uint64_t> count(traces, 0);
  for (const ContextObservation& o : data.observations) ++count[o.trace];
  std::vector<uint32_t> order(traces);
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t t) {
    const uint32_t stack = data.trace_stack[t];
    const uint32_t caller = data.stack_caller[stack];
    return std::make_tuple(data.caller_op[caller], caller, stack, t);
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });

  for (int l = 0; l < kContextLevels; ++l) {
    const size_t n = data.contexts(static_cast<ContextLevel>(l));
    begin[static_cast<size_t>(l)].assign(n, UINT64_MAX);
    end[static_cast<size_t>(l)].assign(n, 0);
  }
  uint64_t offset = 0;
  for (uint32_t t : order) {
    uint32_t id = t;
    for (int l = kContextLevels - 1; l >= 0; --l) {
      const auto level = static_cast<ContextLevel>(l);
      auto& b = begin[static_cast<size_t>(l)][id];
      auto& e = end[static_cast<size_t>(l)][id];
      b = std::min(b, offset);
      e = std::max(e, offset + count[t]);
      if (l > 0) id = data.coarser(level, id);
    }
    offset += count[t];
  }
  for (auto& b : begin)
    for (uint64_t& x : b)
      if (x == UINT64_MAX) x = 0;  // a context without observations (not produced today)
  // Fill: next free slot per trace context.
  std::vector<uint64_t> next(begin[kContextLevels - 1]);
  durations.resize(data.observations.size());
  for (const ContextObservation& o : data.observations) durations[next[o.trace]++] = o.duration;
}

double weighted_sd(std::span<const Moments> classes) {
  double sum = 0;
  uint64_t n = 0;
  for (const Moments& m : classes) {
    sum += static_cast<double>(m.n) * m.population_sd();
    n += m.n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

namespace {
Moments moments_of(std::span<const int64_t> samples) {
  Moments m;
  for (int64_t x : samples) m.add(static_cast<double>(x));
  return m;
}

void finish(LevelStats& s, double sd_sum, double bimodal_n, double operation_sd) {
  const double n = static_cast<double>(s.observations);
  s.weighted_sd = n > 0 ? sd_sum / n : 0;
  s.bimodal_percent = n > 0 ? 100.0 * bimodal_n / n : 0;
  s.reduction_percent = reduction_percent(operation_sd, s.weighted_sd);
}
}  // namespace

ContextLevelReport summarize_levels(const ContextData& data, const ContextIndex& index) {
  ContextLevelReport report;
  const size_t ops = data.operations.size();
  report.operations.resize(ops);
  // Per level and operation: Σ n_c σ_c and Σ n_c over bimodal contexts.
  std::vector<std::array<double, kContextLevels>> sd_sum(ops), bimodal(ops);
  for (int l = 0; l < kContextLevels; ++l) {
    const auto level = static_cast<ContextLevel>(l);
    for (uint32_t c = 0; c < data.contexts(level); ++c) {
      const uint32_t op = data.operation_of(level, c);
      const std::span<const int64_t> samples = index.samples(level, c);
      const Moments m = moments_of(samples);
      LevelStats& s = report.operations[op].levels[static_cast<size_t>(l)];
      ++s.contexts;
      s.singleton_contexts += m.n == 1;
      s.observations += m.n;
      sd_sum[op][static_cast<size_t>(l)] += static_cast<double>(m.n) * m.population_sd();
      const double bc = bimodality_coefficient(samples);
      if (level == ContextLevel::kOperation) report.operations[op].bimodality = bc;
      if (m.n >= kMinBimodalitySample && bc > kBimodalityThreshold) {
        bimodal[op][static_cast<size_t>(l)] += static_cast<double>(m.n);
      }
    }
  }
  std::array<double, kContextLevels> total_sd{}, total_bimodal{};
  for (uint32_t op = 0; op < ops; ++op) {
    OperationContextStats& o = report.operations[op];
    o.op = op;
    const double op_sd = o.levels[0].observations > 0
                             ? sd_sum[op][0] / static_cast<double>(o.levels[0].observations)
                             : 0;
    for (size_t l = 0; l < kContextLevels; ++l) {
      finish(o.levels[l], sd_sum[op][l], bimodal[op][l], op_sd);
      LevelStats& t = report.levels[l];
      t.contexts += o.levels[l].contexts;
      t.singleton_contexts += o.levels[l].singleton_contexts;
      t.observations += o.levels[l].observations;
      total_sd[l] += sd_sum[op][l];
      total_bimodal[l] += bimodal[op][l];
    }
  }
  const double n0 = static_cast<double>(report.levels[0].observations);
  const double system_op_sd = n0 > 0 ? total_sd[0] / n0 : 0;
  for (size_t l = 0; l < kContextLevels; ++l) {
    finish(report.levels[l], total_sd[l], total_bimodal[l], system_op_sd);
  }
  return report;
}

}  // namespace sonde::analysis
