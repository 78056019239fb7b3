// A planted workload with known context-dependent timing, built in memory:
//  - `work` takes 100 ns from caller A and 1000 ns from caller B
//    (caller context explains it);
//  - `step` is called twice by C: the first call takes 100 ns, the second
//    1000 ns (only the trace position explains it: same caller, same stack);
//  - `same` takes 500 ns from both D and E (contexts that do not differ).
// Small deterministic jitter (0..4 ns) keeps the distributions non-constant.
#include <gtest/gtest.h>

#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_tree.hpp"
#include "context/context_fixtures.hpp"

namespace sonde::test {
namespace {

using analysis::ContextLevel;

analysis::ContextData planted(int repetitions) {
  analysis::ContextCollector c;
  int64_t id = 0;
  for (int i = 0; i < repetitions; ++i) {
    const int64_t j = i % 5;
    add_trace(c, {{"A", 0, 2000}, {"work", 1, 100 + j}}, id++);
    add_trace(c, {{"B", 0, 2000}, {"work", 1, 1000 + j}}, id++);
    add_trace(c, {{"C", 0, 2000}, {"step", 1, 100 + j}, {"step", 1, 1000 + j}}, id++);
    add_trace(c, {{"D", 0, 2000}, {"same", 1, 500 + j}}, id++);
    add_trace(c, {{"E", 0, 2000}, {"same", 1, 500 + j}}, id++);
  }
  return c.take();
}

uint32_t op_id(const analysis::ContextData& d, const std::string& name) {
  for (uint32_t i = 0; i < d.operations.size(); ++i)
    if (d.operations[i] == name) return i;
  ADD_FAILURE() << "no operation " << name;
  return 0;
}

TEST(ContextPlanted, LevelsRecoverThePlantedContexts) {
  const auto d = planted(40);
  const analysis::ContextIndex index(d);
  const auto report = analysis::summarize_levels(d, index);
  const auto& work = report.operations[op_id(d, "work")];
  const auto& step = report.operations[op_id(d, "step")];
  EXPECT_EQ(work.levels[1].contexts, 2u);
  EXPECT_GT(work.levels[1].reduction_percent, 95.0);
  EXPECT_EQ(step.levels[1].contexts, 1u);
  EXPECT_EQ(step.levels[2].contexts, 1u);
  EXPECT_EQ(step.levels[3].contexts, 2u);
  EXPECT_NEAR(step.levels[2].reduction_percent, 0.0, 1e-9);  // stack cannot separate
  EXPECT_GT(step.levels[3].reduction_percent, 95.0);         // trace can
  // Multi-modality: present for the whole operation, gone in trace context.
  EXPECT_GT(step.bimodality, analysis::kBimodalityThreshold);
  EXPECT_EQ(step.levels[2].bimodal_percent, 100.0);
  EXPECT_EQ(step.levels[3].bimodal_percent, 0.0);
}

TEST(ContextPlanted, OperatorsKeepExactlyThePlantedContexts) {
  const auto d = planted(40);
  const analysis::ContextIndex index(d);
  analysis::ContextTree tree(d, index);
  const auto counts = tree.apply_operators({});
  EXPECT_EQ(counts.merged, 1u);  // `same` from D and from E
  EXPECT_EQ(counts.linked, 0u);  // 40 observations everywhere >= 30

  const auto work = tree.summarize(op_id(d, "work"));
  EXPECT_EQ(work.leaves, 2u);
  EXPECT_EQ(work.leaves_per_level[static_cast<size_t>(ContextLevel::kCaller)], 2u);
  const auto step = tree.summarize(op_id(d, "step"));
  EXPECT_EQ(step.leaves, 2u);
  EXPECT_EQ(step.leaves_per_level[static_cast<size_t>(ContextLevel::kTrace)], 2u);
  EXPECT_EQ(step.bimodal_percent, 0.0);
  const auto same = tree.summarize(op_id(d, "same"));
  EXPECT_EQ(same.leaves, 1u);
  EXPECT_EQ(same.leaves_per_level[static_cast<size_t>(ContextLevel::kOperation)], 1u);
  // The entry operations are alone in their context: one leaf each.
  EXPECT_EQ(tree.summarize().leaves, 2u + 2u + 1u + 5u);
}

TEST(ContextPlanted, SmallContextsAreLinkedAndMaxLeavesStopsMerging) {
  const auto d = planted(10);  // 10 < 30 observations per context
  const analysis::ContextIndex index(d);
  analysis::ContextTree tree(d, index);
  const auto counts = tree.apply_operators({});
  EXPECT_EQ(counts.merged, 0u);  // too few observations to judge similarity
  const auto work = tree.summarize(op_id(d, "work"));
  EXPECT_EQ(work.leaves, 2u);
  EXPECT_EQ(work.linked_leaves, 2u);
  EXPECT_EQ(work.entities, 1u);  // both modelled by the `work` node

  const auto d2 = planted(40);
  const analysis::ContextIndex index2(d2);
  analysis::ContextTree limited(d2, index2);
  analysis::ContextTreeOptions options;
  options.similarity = 1e9;  // everything is similar...
  options.max_leaves = 9;    // ...but stop at 9 leaves
  limited.apply_operators(options);
  EXPECT_EQ(limited.summarize().leaves, 9u);
}

}  // namespace
}  // namespace sonde::test
