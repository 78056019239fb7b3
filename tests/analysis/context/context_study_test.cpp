// The partial-instrumentation study (context_study.hpp): projection
// semantics on hand-made traces, row counts, the full subset reproducing
// summarize_levels, determinism, and the monotonic properties that must
// hold for any log (stack and trace contexts never shrink when monitoring
// points are added; finer levels never reduce σ less).
#include "analysis/context/context_study.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "analysis/context/context_levels.hpp"
#include "context/context_fixtures.hpp"

namespace sonde::test {
namespace {

using analysis::ContextData;
using analysis::ProjectionResult;

ContextData random_study_data(uint64_t seed, int traces) {
  std::mt19937_64 rng(seed);
  analysis::ContextCollector c;
  for (int t = 0; t < traces; ++t) add_trace(c, random_trace(rng, 6, 12), t);
  return c.take();
}

std::vector<bool> subset(const ContextData& d, std::initializer_list<const char*> names) {
  std::vector<bool> m(d.operations.size(), false);
  for (const char* n : names)
    for (size_t i = 0; i < d.operations.size(); ++i)
      if (d.operations[i] == n) m[i] = true;
  return m;
}

TEST(ContextStudy, UnmonitoredExecutionsVanishAndChildrenMoveUp) {
  analysis::ContextCollector c;
  add_trace(c, {{"A", 0, 10}, {"B", 1, 5}, {"C", 2, 1}}, 1);
  add_trace(c, {{"A", 0, 10}, {"C", 1, 3}}, 2);
  add_trace(c, {{"D", 0, 10}, {"B", 1, 5}, {"C", 1, 1}}, 3);
  const ContextData d = c.take();

  // Without B: A->B->C becomes A->C, the same tree as trace 2 (C <- A).
  const ProjectionResult ac = analysis::project_instrumentation(d, subset(d, {"A", "C"}));
  EXPECT_EQ(ac.executions, 5u);
  EXPECT_EQ(ac.traces, 3u);       // trace 3 keeps its C, now a root
  EXPECT_EQ(ac.contexts[1], 3u);  // A <- $, C <- A, C <- $
  EXPECT_EQ(ac.contexts[3], 3u);  // trees A->C (traces 1, 2) and C

  // Without A and D: B and C become roots; trace 3 becomes a forest B, C.
  const ProjectionResult bc = analysis::project_instrumentation(d, subset(d, {"B", "C"}));
  EXPECT_EQ(bc.executions, 5u);
  EXPECT_EQ(bc.traces, 3u);
  EXPECT_EQ(bc.contexts[0], 2u);
  EXPECT_EQ(bc.contexts[1], 3u);  // B <- $, C <- B, C <- $
  EXPECT_EQ(bc.contexts[2], 3u);
  EXPECT_EQ(bc.contexts[3], 2u + 1u + 2u);  // trees B->C, C, and the forest B, C

  const ProjectionResult none = analysis::project_instrumentation(d, subset(d, {}));
  EXPECT_EQ(none.executions, 0u);
  EXPECT_EQ(none.traces, 0u);
}

TEST(ContextStudy, RowsPerMonitoringPointCount) {
  const ContextData d = random_study_data(3, 200);
  const auto rows = analysis::run_study(d, 7, 42);
  ASSERT_EQ(rows.size(), 7 * d.operations.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].monitoring_points, i / 7 + 1);
    EXPECT_EQ(rows[i].run, i % 7);
    EXPECT_LE(rows[i].result.contexts[0], rows[i].monitoring_points);
  }
  const std::string csv = analysis::study_csv(rows);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(rows.size() + 1));
  const std::string svg = analysis::study_svg(rows, "a <title> & more");
  EXPECT_NE(svg.find("a &lt;title&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '<') - std::count(svg.begin(), svg.end(), '>'), 0);
}

TEST(ContextStudy, DeterministicForASeed) {
  const ContextData d = random_study_data(4, 150);
  EXPECT_EQ(analysis::study_csv(analysis::run_study(d, 5, 9)),
            analysis::study_csv(analysis::run_study(d, 5, 9)));
  EXPECT_NE(analysis::study_csv(analysis::run_study(d, 5, 9)),
            analysis::study_csv(analysis::run_study(d, 5, 10)));
}

class ContextStudyProperties : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ContextStudyProperties, AllOperationsReproduceTheFullModel) {
  const ContextData d = random_study_data(GetParam(), 300);
  const analysis::ContextIndex index(d);
  const auto full = analysis::summarize_levels(d, index);
  const ProjectionResult all =
      analysis::project_instrumentation(d, std::vector<bool>(d.operations.size(), true));
  EXPECT_EQ(all.executions, d.observations.size());
  EXPECT_EQ(all.traces, d.traces);
  for (size_t l = 0; l < analysis::kContextLevels; ++l) {
    EXPECT_EQ(all.contexts[l], full.levels[l].contexts) << l;
    EXPECT_NEAR(all.weighted_sd[l], full.levels[l].weighted_sd, 1e-6 * full.levels[0].weighted_sd);
    EXPECT_NEAR(all.reduction_percent[l], full.levels[l].reduction_percent, 1e-6) << l;
  }
  // And every study row with |S| = all operations is that result.
  const auto rows = analysis::run_study(d, 3, GetParam());
  for (const auto& r : rows) {
    if (r.monitoring_points != d.operations.size()) continue;
    EXPECT_EQ(r.result.contexts, all.contexts);
  }
}

TEST_P(ContextStudyProperties, MonotonicProperties) {
  const ContextData d = random_study_data(GetParam(), 300);
  const size_t ops = d.operations.size();
  const ProjectionResult all = analysis::project_instrumentation(d, std::vector<bool>(ops, true));
  for (const auto& r : analysis::run_study(d, 4, GetParam())) {
    const ProjectionResult& p = r.result;
    // Finer relations: at least as many contexts, at least as much reduction.
    EXPECT_LE(p.contexts[0], p.contexts[1]);
    EXPECT_LE(p.contexts[1], p.contexts[2]);
    EXPECT_LE(p.contexts[2], p.contexts[3]);
    EXPECT_GE(p.reduction_percent[1], -1e-9);
    EXPECT_GE(p.reduction_percent[2], p.reduction_percent[1] - 1e-9);
    EXPECT_GE(p.reduction_percent[3], p.reduction_percent[2] - 1e-9);
    // Stack and trace contexts are maximal under full instrumentation.
    EXPECT_LE(p.contexts[2], all.contexts[2]);
    EXPECT_LE(p.contexts[3], all.contexts[3]);
  }
  // Adding one monitoring point at a time never loses a stack or trace
  // context nor an execution (caller contexts may go either way).
  std::mt19937_64 rng(GetParam());
  std::vector<size_t> order(ops);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<bool> monitored(ops, false);
  ProjectionResult prev = analysis::project_instrumentation(d, monitored);
  for (size_t op : order) {
    monitored[op] = true;
    const ProjectionResult next = analysis::project_instrumentation(d, monitored);
    EXPECT_GE(next.contexts[2], prev.contexts[2]);
    EXPECT_GE(next.contexts[3], prev.contexts[3]);
    EXPECT_GE(next.executions, prev.executions);
    EXPECT_GE(next.traces, prev.traces);
    prev = next;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ContextStudyProperties, ::testing::Values(1, 2, 3, 4, 5));

}  // namespace
}  // namespace sonde::test
