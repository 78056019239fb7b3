// Calling-context models (seed 000): the paper's running example, its
// arithmetic, and property tests of the partitions and the CCT operators on
// random traces. Expected values come from the example's definition or
// hand computation.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_tree.hpp"
#include "context/context_fixtures.hpp"

namespace sonde::test {
namespace {

using analysis::ContextCollector;
using analysis::ContextData;
using analysis::ContextIndex;
using analysis::ContextLevel;
using analysis::ContextTree;
using analysis::Moments;

size_t contexts_of_op(const ContextData& d, ContextLevel level, const std::string& op) {
  std::set<uint32_t> ids;
  for (const auto& o : d.observations)
    if (d.operations[o.op] == op) ids.insert(d.context_of(o, level));
  return ids.size();
}

// Figs. 2/3: SD1 = d -> a -> {f, f}; SD2, SD3 single other operations;
// SD4 = f alone.
TEST(ContextModel, PaperRunningExampleContextCounts) {
  ContextCollector c;
  add_trace(c, {{"d", 0, 100}, {"a", 1, 90}, {"f", 2, 10}, {"f", 2, 20}}, 1);
  add_trace(c, {{"g", 0, 5}}, 2);
  add_trace(c, {{"h", 0, 5}}, 3);
  add_trace(c, {{"f", 0, 30}}, 4);
  const ContextData d = c.take();
  EXPECT_EQ(contexts_of_op(d, ContextLevel::kTrace, "f"), 3u);
  EXPECT_EQ(contexts_of_op(d, ContextLevel::kStack, "f"), 2u);
  EXPECT_EQ(contexts_of_op(d, ContextLevel::kCaller, "f"), 2u);
  EXPECT_EQ(d.shapes.size(), 4u);
  // TC3 (f in SD4) holds the same executions as SC2 (root f): one each.
  std::map<uint32_t, int> per_stack;
  for (const auto& o : d.observations)
    if (d.operations[o.op] == "f") ++per_stack[o.stack];
  std::multiset<int> sizes;
  for (auto [k, v] : per_stack) sizes.insert(v);
  EXPECT_EQ(sizes, (std::multiset<int>{1, 2}));
  EXPECT_EQ(d.describe(ContextLevel::kStack, d.observations[2].stack), "$ > d > a > f");
  EXPECT_EQ(d.describe(ContextLevel::kCaller, d.observations.back().caller), "f <- $");
}

Moments with_sd(double weight, double sd) {
  Moments m;
  m.n = static_cast<uint64_t>(weight * 1000);
  m.m2 = static_cast<double>(m.n) * sd * sd;
  return m;
}

// Section 3.3: weights derived from the published σ values (research digest).
TEST(ContextModel, PaperReductionArithmetic) {
  const Moments sc[] = {with_sd(0.665, 155.54), with_sd(0.335, 49.74)};
  EXPECT_NEAR(analysis::reduction_percent(136.47, analysis::weighted_sd(sc)), 11.97, 0.05);
  const Moments tc[] = {with_sd(0.345, 53.83), with_sd(0.320, 2.20), with_sd(0.335, 49.74)};
  EXPECT_NEAR(analysis::reduction_percent(136.47, analysis::weighted_sd(tc)), 73.66, 0.05);
}

TEST(ContextModel, MomentsMergeEqualsSequentialAdd) {
  Moments a, b, all;
  for (int i = 0; i < 50; ++i) {
    const double x = (i * 37) % 101;
    (i % 3 == 0 ? a : b).add(x);
    all.add(x);
  }
  a.merge(b);
  EXPECT_EQ(a.n, all.n);
  EXPECT_NEAR(a.mean, all.mean, 1e-9);
  EXPECT_NEAR(a.m2, all.m2, 1e-6);
}

TEST(ContextModel, BimodalityCoefficientSeparatesTwoModesFromOne) {
  std::vector<int64_t> two, one;
  for (int i = 0; i < 200; ++i) {
    two.push_back(i % 2 == 0 ? 100 + i % 7 : 1000 + i % 7);
    one.push_back(500 + (i * 37) % 41 - 20 + (i % 5 == 0 ? 10 : 0));
  }
  EXPECT_GT(analysis::bimodality_coefficient(two), analysis::kBimodalityThreshold);
  EXPECT_LT(analysis::bimodality_coefficient(one), analysis::kBimodalityThreshold);
  EXPECT_EQ(analysis::bimodality_coefficient(std::vector<int64_t>(20, 7)), 0.0);
}

ContextData random_data(uint64_t seed, int traces) {
  std::mt19937_64 rng(seed);
  ContextCollector c;
  for (int t = 0; t < traces; ++t) add_trace(c, random_trace(rng, 6, 12), t);
  return c.take();
}

class ContextProperties : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ContextProperties, TraceImpliesStackImpliesCaller) {
  const ContextData d = random_data(GetParam(), 300);
  // Each finer context maps to one coarser context, and that mapping agrees
  // with every observation's own coarser context.
  for (const auto& o : d.observations) {
    EXPECT_EQ(d.coarser(ContextLevel::kTrace, o.trace), o.stack);
    EXPECT_EQ(d.coarser(ContextLevel::kStack, o.stack), o.caller);
    EXPECT_EQ(d.coarser(ContextLevel::kCaller, o.caller), o.op);
  }
  // Independently of the ids: equal (shape, position) => equal root path
  // => equal caller name, recomputed from the shapes.
  for (const auto& shape : d.shapes) {
    for (size_t i = 0; i < shape.ops.size(); ++i) {
      std::string path;
      for (int32_t p = static_cast<int32_t>(i); p >= 0; p = shape.parent[static_cast<size_t>(p)])
        path = d.operations[shape.ops[static_cast<size_t>(p)]] + "/" + path;
      const uint32_t stack = d.trace_stack[shape.first_context + i];
      std::string expected;
      for (uint32_t s = stack; s != analysis::kNoContext; s = d.stack_parent[s])
        expected = d.operations[d.stack_op[s]] + "/" + expected;
      EXPECT_EQ(path, expected);
    }
  }
  const ContextIndex index(d);
  const auto report = analysis::summarize_levels(d, index);
  for (const auto& op : report.operations) {
    EXPECT_LE(op.levels[1].contexts, op.levels[2].contexts);
    EXPECT_LE(op.levels[2].contexts, op.levels[3].contexts);
  }
}

TEST_P(ContextProperties, FinerPartitionsNeverIncreaseWeightedSd) {
  const ContextData d = random_data(GetParam(), 300);
  const ContextIndex index(d);
  const auto report = analysis::summarize_levels(d, index);
  const double eps = 1e-9;
  for (const auto& op : report.operations) {
    for (size_t l = 1; l < analysis::kContextLevels; ++l) {
      EXPECT_LE(op.levels[l].weighted_sd, op.levels[l - 1].weighted_sd * (1 + eps) + eps);
      EXPECT_GE(op.levels[l].reduction_percent, op.levels[l - 1].reduction_percent - 1e-6);
    }
  }
  for (size_t l = 1; l < analysis::kContextLevels; ++l) {
    EXPECT_LE(report.levels[l].weighted_sd, report.levels[l - 1].weighted_sd * (1 + eps) + eps);
    EXPECT_EQ(report.levels[l].observations, d.observations.size());
  }
  EXPECT_GE(report.levels[1].reduction_percent, 0.0);
}

TEST_P(ContextProperties, OperatorsPreserveObservationsAndPartition) {
  const ContextData d = random_data(GetParam(), 400);
  const ContextIndex index(d);
  ContextTree tree(d, index);
  for (const uint64_t min_obs : {1u, 5u, 30u}) {
    analysis::ContextTreeOptions options;
    options.min_observations = min_obs;
    options.similarity = 0.3;
    const auto counts = tree.apply_operators(options);
    EXPECT_GE(counts.rounds, 1u);
    // The leaves partition the trace contexts, hence the observations.
    std::multiset<uint32_t> covered;
    uint64_t n = 0;
    for (int32_t leaf : tree.leaves()) {
      const auto& node = tree.nodes()[static_cast<size_t>(leaf)];
      covered.insert(node.members.begin(), node.members.end());
      n += node.n;
      // Operator 1 fixpoint: no leaf below the operation level without siblings.
      if (node.level > 0) {
        EXPECT_GT(tree.live_children(node.parent).size(), 1u);
      }
      // Operator 2 fixpoint: small leaves are linked to an ancestor.
      if (node.level > 0 && node.n < min_obs) {
        EXPECT_GE(node.linked_to, 0);
      }
    }
    EXPECT_EQ(n, d.observations.size());
    EXPECT_EQ(covered.size(), d.contexts(ContextLevel::kTrace));
    EXPECT_EQ(std::set<uint32_t>(covered.begin(), covered.end()).size(), covered.size());
    EXPECT_EQ(tree.summarize().observations, d.observations.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ContextProperties, ::testing::Values(1u, 2u, 3u, 42u, 1234u));

}  // namespace
}  // namespace sonde::test
