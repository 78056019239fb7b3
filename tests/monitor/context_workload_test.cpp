// `sonde context` on a really monitored program with planted calling-context
// timing (programs/context_workload.cpp). The expected contexts come from
// the program's structure: 100 iterations of five traces
//   A->work(20 µs)  B->work(200 µs)  C->step(20 µs),step(200 µs)
//   D->same(100 µs)  E->same(100 µs).
//
// On a loaded 2-core VM a few executions are preempted for milliseconds.
// Those outliers dominate σ and Sarle's bimodality coefficient (which flags
// heavy tails), so this test checks the σ-based figures only where they are
// exact (one context: 0 %) and judges modality by quartiles, and the model
// by the CCT operators (median/IQR, robust to a few outliers).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_log.hpp"
#include "analysis/context/context_tree.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

using analysis::ContextLevel;
constexpr int kIterations = 100;
constexpr size_t kCaller = 1, kStack = 2, kTrace = 3;

uint32_t op_id(const analysis::ContextData& d, const std::string& name) {
  for (uint32_t i = 0; i < d.operations.size(); ++i)
    if (d.operations[i].rfind(name, 0) == 0) return i;  // "ctx.work" or "ctx.work()"
  ADD_FAILURE() << "no operation " << name;
  return 0;
}

// Quartiles of every context of `op` at `level`, in context-id order.
std::vector<analysis::Quartiles> quartiles_of(const analysis::ContextData& d,
                                              const analysis::ContextIndex& index,
                                              ContextLevel level, uint32_t op) {
  std::vector<analysis::Quartiles> out;
  for (uint32_t c = 0; c < d.contexts(level); ++c) {
    if (d.operation_of(level, c) != op) continue;
    const auto s = index.samples(level, c);
    std::vector<int64_t> copy(s.begin(), s.end());
    out.push_back(analysis::quartiles(copy));
  }
  return out;
}

class ContextWorkload : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string out = fresh_dir("context_workload");
    const RunResult r = run_program(
        {std::string(SONDE_TEST_PROGRAMS) + "/test_context_workload", std::to_string(kIterations)},
        {"SONDE_OUT=" + out, "SONDE_SUMMARY=false"});
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    const auto logs = files_with_suffix(out, ".sonde");
    ASSERT_EQ(logs.size(), 1u);
    log_ = new analysis::ContextLog(analysis::read_context_log(logs[0]));
  }
  static void TearDownTestSuite() {
    delete log_;
    log_ = nullptr;
  }
  static const analysis::ContextData& data() { return log_->data; }
  static analysis::ContextLog* log_;
};
analysis::ContextLog* ContextWorkload::log_ = nullptr;

TEST_F(ContextWorkload, LogHasThePlantedStructure) {
  ASSERT_NE(log_, nullptr);
  const auto& d = data();
  EXPECT_EQ(d.traces, 5u * kIterations);
  EXPECT_EQ(d.skipped_traces, 0u);
  EXPECT_EQ(d.observations.size(), 11u * kIterations);
  EXPECT_EQ(d.operations.size(), 8u);
  EXPECT_EQ(d.shapes.size(), 5u);  // one call tree per entry operation
  // System-wide: 8 operations; work and same have 2 callers (10 caller and
  // stack contexts); step's two positions add one trace context (11).
  EXPECT_EQ(d.contexts(ContextLevel::kCaller), 10u);
  EXPECT_EQ(d.contexts(ContextLevel::kStack), 10u);
  EXPECT_EQ(d.contexts(ContextLevel::kTrace), 11u);
}

TEST_F(ContextWorkload, CallerContextSeparatesWork) {
  ASSERT_NE(log_, nullptr);
  const auto& d = data();
  const analysis::ContextIndex index(d);
  const auto report = analysis::summarize_levels(d, index);
  const uint32_t work = op_id(d, "ctx.work");
  EXPECT_EQ(report.operations[work].levels[kCaller].contexts, 2u);
  EXPECT_GT(report.operations[work].levels[kCaller].reduction_percent, 0.0);
  const auto q = quartiles_of(d, index, ContextLevel::kCaller, work);
  ASSERT_EQ(q.size(), 2u);
  // Planted 20 µs vs 200 µs; the busy-wait never ends early.
  const double fast = std::min(q[0].median, q[1].median);
  const double slow = std::max(q[0].median, q[1].median);
  EXPECT_GE(fast, 20'000.0);
  EXPECT_GE(slow, 200'000.0);
  EXPECT_GT(slow, 3 * fast);
}

TEST_F(ContextWorkload, OnlyTraceContextSplitsStepsTwoModes) {
  ASSERT_NE(log_, nullptr);
  const auto& d = data();
  const analysis::ContextIndex index(d);
  const auto report = analysis::summarize_levels(d, index);
  const uint32_t step = op_id(d, "ctx.step");
  const auto& levels = report.operations[step].levels;
  EXPECT_EQ(levels[kCaller].contexts, 1u);
  EXPECT_EQ(levels[kStack].contexts, 1u);
  EXPECT_EQ(levels[kTrace].contexts, 2u);
  EXPECT_EQ(levels[kStack].reduction_percent, 0.0);  // one context: nothing explained
  EXPECT_GT(levels[kTrace].reduction_percent, 0.0);
  // Modality by quartiles: the midpoint between the planted modes (110 µs)
  // lies inside the one stack context's central half, and outside each
  // trace context's. (Not IQR against median: under load, short wake-ups of
  // other threads stretch many 20 µs executions by tens of µs.)
  constexpr double kMid = 110'000;
  const auto stack = quartiles_of(d, index, ContextLevel::kStack, step);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_LT(stack[0].q1, kMid);
  EXPECT_GT(stack[0].q3, kMid);
  const auto trace = quartiles_of(d, index, ContextLevel::kTrace, step);
  ASSERT_EQ(trace.size(), 2u);
  for (const auto& q : trace) EXPECT_TRUE(q.q3 < kMid || q.q1 > kMid) << q.q1 << ".." << q.q3;
}

// Whether `same` from D and from E merge is left out here: on a loaded
// machine the scheduler can preempt one caller's executions far more often
// than the other's (seen in CI: median 602 µs from D, 100 µs from E), and
// then the model is right not to merge them. The merge operator is checked
// on planted data in tests/analysis/context/context_planted_test.cpp.
TEST_F(ContextWorkload, ModelKeepsWorkAndStepSplit) {
  ASSERT_NE(log_, nullptr);
  const auto& d = data();
  const analysis::ContextIndex index(d);
  analysis::ContextTree tree(d, index);
  const auto counts = tree.apply_operators({});
  EXPECT_EQ(counts.linked, 0u);  // 100 observations everywhere >= 30
  EXPECT_LE(counts.merged, 1u);  // at most `same` from D and E
  const auto work = tree.summarize(op_id(d, "ctx.work"));
  EXPECT_EQ(work.leaves, 2u);
  EXPECT_EQ(work.leaves_per_level[kCaller], 2u);
  const auto step = tree.summarize(op_id(d, "ctx.step"));
  EXPECT_EQ(step.leaves, 2u);
  EXPECT_EQ(step.leaves_per_level[kTrace], 2u);
  const auto same = tree.summarize(op_id(d, "ctx.same"));
  EXPECT_EQ(same.leaves, 2u - counts.merged);
  EXPECT_EQ(tree.summarize().leaves, 2u + 2u + same.leaves + 5u);
}

}  // namespace
}  // namespace sonde::test
