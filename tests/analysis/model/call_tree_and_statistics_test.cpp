// Call-tree links, exclusive time, per-operation statistics and the trace
// summary, on traces with hand-computed answers; and a trace 100,000 calls
// deep pushed through the whole pipeline on a small thread stack.
#include <gtest/gtest.h>
#include <pthread.h>

#include <limits>

#include "analysis/model/aggregated_call_tree.hpp"
#include "analysis/model/call_tree.hpp"
#include "analysis/model/dependency_graph.hpp"
#include "analysis/model/operation_statistics.hpp"
#include "analysis/model/trace_summary.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/render/graph_dot.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

Execution exec(std::string_view op, int64_t tin, int64_t tout, int32_t eoi, int32_t ess,
               bool failed = false) {
  Execution e;
  e.operation = op;
  e.component = "C";
  e.host = "h";
  e.tin = tin;
  e.tout = tout;
  e.eoi = eoi;
  e.ess = ess;
  e.failed = failed;
  return e;
}

// main[0,100] { a[10,40] { b[15,25] }  c[50,90] { b[60,70]  b[75,85] } }
Trace sample_trace() {
  Trace t;
  t.trace_id = 1;
  t.executions = {exec("main", 0, 100, 0, 0), exec("a", 10, 40, 1, 1),
                  exec("b", 15, 25, 2, 2),    exec("c", 50, 90, 3, 1),
                  exec("b", 60, 70, 4, 2),    exec("b", 75, 85, 5, 2, true)};
  return t;
}

TEST(CallTree, ParentsAndChildrenFollowFromEoiAndEss) {
  const Trace t = sample_trace();
  const CallTree tree = build_call_tree(t);
  EXPECT_EQ(tree.parent, (std::vector<int32_t>{-1, 0, 1, 0, 3, 3}));
  EXPECT_EQ(tree.first_root, 0);
  EXPECT_EQ(tree.first_child[0], 1);
  EXPECT_EQ(tree.next_sibling[1], 3);
  EXPECT_EQ(tree.next_sibling[3], -1);
  EXPECT_EQ(tree.first_child[3], 4);
  EXPECT_EQ(tree.next_sibling[4], 5);
  EXPECT_EQ(tree.first_child[2], -1);
}

TEST(CallTree, ExclusiveTimeSubtractsDirectCalleesOnly) {
  const Trace t = sample_trace();
  const std::vector<int64_t> ex = exclusive_durations(t, build_call_tree(t));
  // main 100 - (a 30 + c 40) = 30; a 30 - b 10 = 20; c 40 - 10 - 10 = 20.
  EXPECT_EQ(ex, (std::vector<int64_t>{30, 20, 10, 20, 10, 10}));
}

TEST(OperationStatistics, CountsFailuresInclusiveAndExclusive) {
  OperationStatistics stats;
  stats.add(sample_trace());
  const auto results = stats.results();
  ASSERT_EQ(results.size(), 4u);
  // Sorted by total inclusive time: main 100, c 40, a 30, b 30 (tie: by name).
  EXPECT_EQ(results[0].key.operation, "main");
  EXPECT_EQ(results[1].key.operation, "c");
  EXPECT_EQ(results[2].key.operation, "a");
  EXPECT_EQ(results[3].key.operation, "b");
  const OperationStats& b = results[3];
  EXPECT_EQ(b.count, 3u);
  EXPECT_EQ(b.failed, 1u);
  EXPECT_EQ(b.inclusive.total, 30);
  EXPECT_DOUBLE_EQ(b.inclusive.mean, 10);
  EXPECT_EQ(b.exclusive.total, 30);
  const OperationStats& main = results[0];
  EXPECT_EQ(main.inclusive.max, 100);
  EXPECT_EQ(main.exclusive.max, 30);
  EXPECT_EQ(results[1].exclusive.min, 20);
  EXPECT_TRUE(main.key.host.empty());  // assembly level by default
}

// A hostile log's times can be any int64 (the fuzz replays found
// timestamps whose differences overflowed, undefined behaviour that UBSan
// stops on): durations and sums saturate instead of wrapping to nonsense.
TEST(OperationStatistics, ExtremeTimesSaturateInsteadOfOverflowing) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Trace t;
  t.trace_id = 7;
  t.executions = {exec("main", kMin + 5, kMax - 5, 0, 0), exec("a", kMax - 9, kMin + 3, 1, 1),
                  exec("a", 0, kMax, 2, 1)};
  EXPECT_EQ(t.executions[0].duration(), kMax);
  EXPECT_EQ(t.executions[1].duration(), kMin);
  EXPECT_EQ(t.duration(), kMax);
  EXPECT_EQ(saturating_span(-10, 15), 25);
  OperationStatistics stats;
  stats.add(t);
  const auto results = stats.results();
  ASSERT_EQ(results.size(), 2u);
  for (const OperationStats& s : results) {
    if (s.key.operation == "main") {
      EXPECT_EQ(s.inclusive.total, kMax);
      // kMax minus its callees' kMin and kMax, each step clamped.
      EXPECT_EQ(s.exclusive.max, 0);
    } else {
      EXPECT_EQ(s.count, 2u);
      EXPECT_EQ(s.inclusive.max, kMax);
      EXPECT_EQ(s.inclusive.min, kMin);
    }
  }
}

TEST(OperationStatistics, DeploymentLevelSeparatesHosts) {
  Trace t = sample_trace();
  t.executions[4].host = "other";
  OperationStatistics stats(AggregationLevel::kDeployment);
  stats.add(t);
  EXPECT_EQ(stats.results().size(), 5u);
}

TEST(TraceSummary, CountsAndAggregatesReasons) {
  TraceSummaryCollector c;
  c.on_trace(sample_trace());
  InvalidTrace bad;
  bad.trace_id = 5;
  bad.closed_by = CloseCause::kEndOfInput;
  bad.problems = {{TraceProblemKind::kMissingAfterEvent, "missing after event for op x (eoi 0)"}};
  c.on_invalid_trace(bad);
  bad.trace_id = 6;
  c.on_invalid_trace(bad);
  bad.trace_id = 7;
  bad.closed_by = CloseCause::kEvicted;
  bad.problems = {{TraceProblemKind::kNoTraceMetadata, "no TraceMetadata"}};
  c.on_invalid_trace(bad);
  const TraceCounts r = c.results();
  EXPECT_EQ(r.valid, 1u);
  EXPECT_EQ(r.invalid, 3u);
  EXPECT_EQ(r.executions, 6u);
  EXPECT_EQ(r.failed_executions, 1u);
  EXPECT_EQ(r.max_depth, 3);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].kind, TraceProblemKind::kMissingAfterEvent);
  EXPECT_EQ(r.problems[0].traces, 2u);
  EXPECT_EQ(r.problems[0].example_trace_id, 5);
  EXPECT_EQ(r.invalid_closed_by[static_cast<size_t>(CloseCause::kEndOfInput)], 2u);
  EXPECT_EQ(r.invalid_closed_by[static_cast<size_t>(CloseCause::kEvicted)], 1u);
  EXPECT_EQ(r.durations.count, 1u);
  EXPECT_EQ(r.durations.max, 100);
}

TEST(AggregatedCallTree, MergesIdenticalPaths) {
  AggregatedCallTree tree(AggregationLevel::kAssembly);
  tree.add(sample_trace());
  tree.add(sample_trace());
  const auto& n = tree.nodes();
  // Entry, main, main/a, main/a/b, main/c, main/c/b.
  ASSERT_EQ(n.size(), 6u);
  EXPECT_EQ(tree.traces(), 2u);
  EXPECT_EQ(n[0].children, (std::vector<int32_t>{1}));
  EXPECT_EQ(n[1].key.operation, "main");
  EXPECT_EQ(n[1].time.count, 2u);
  EXPECT_EQ(n[5].key.operation, "b");
  EXPECT_EQ(n[5].parent, 4);
  EXPECT_EQ(n[5].time.count, 4u);  // two b under c per trace
  EXPECT_EQ(n[5].time.failed, 2u);
  EXPECT_EQ(n[5].time.total, 40);
  EXPECT_DOUBLE_EQ(n[5].time.mean(), 10);
  EXPECT_EQ(n[3].time.count, 2u);  // b under a is a different path
}

TEST(DependencyGraph, CountsCallsPerCallerCalleePair) {
  DependencyGraph g(AggregationLevel::kAssembly);
  g.add(sample_trace());
  const auto& n = g.nodes();
  ASSERT_EQ(n.size(), 5u);  // Entry, main, a, b, c
  EXPECT_EQ(n[3].key.operation, "b");
  EXPECT_EQ(n[3].time.count, 3u);
  const auto edges = g.edges();
  auto calls = [&](int32_t from, int32_t to) -> uint64_t {
    for (const auto& e : edges) {
      if (e.caller == from && e.callee == to) return e.calls;
    }
    return 0;
  };
  EXPECT_EQ(edges.size(), 5u);
  EXPECT_EQ(calls(0, 1), 1u);  // Entry -> main
  EXPECT_EQ(calls(1, 2), 1u);  // main -> a
  EXPECT_EQ(calls(2, 3), 1u);  // a -> b
  EXPECT_EQ(calls(1, 4), 1u);  // main -> c
  EXPECT_EQ(calls(4, 3), 2u);  // c -> b twice
}

// ---- 100,000 calls deep -----------------------------------------------------

constexpr int kDepth = 100'000;

struct DeepResult {
  bool valid = false;
  int32_t max_ess = -1;
  uint64_t nodes = 0;
  size_t dot_size = 0;
  int64_t root_exclusive = -1;
};

// f calls itself kDepth - 1 times; every level lasts 2 ns longer than its callee.
void* run_deep_pipeline(void* arg) {
  auto* out = static_cast<DeepResult*>(arg);
  TraceAnalysis analysis;
  {
    testing::RecordFeeder feed(analysis.records());
    feed.metadata(1);
    int32_t order = 0;
    for (int i = 0; i < kDepth; ++i) feed.before(1, order++, i, "f");
    for (int i = kDepth - 1; i >= 0; --i) feed.after(1, order++, 2 * kDepth - i, "f");
  }
  AnalysisResult r = analysis.finish();
  out->valid = r.traces.valid == 1 && r.traces.invalid == 0;
  out->max_ess = r.traces.max_depth - 1;
  out->nodes = r.call_tree->nodes().size();
  out->dot_size = to_dot(*r.call_tree).size() + to_dot(*r.dependency_graph).size();
  for (const auto& op : r.operations) out->root_exclusive = op.exclusive.max;
  return nullptr;
}

TEST(DeepTrace, HundredThousandLevelsOnA256KiBStack) {
  // Any recursion over call depth would need far more than 256 KiB here.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  DeepResult result;
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, run_deep_pipeline, &result), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_TRUE(result.valid);
  EXPECT_EQ(result.max_ess, kDepth - 1);
  EXPECT_EQ(result.nodes, static_cast<uint64_t>(kDepth) + 1);  // one path, plus Entry
  EXPECT_GT(result.dot_size, 0u);
  // Each level: tin i, tout 2*kDepth - i; inclusive 2*kDepth - 2i, callee's 2 less.
  EXPECT_EQ(result.root_exclusive, 2);
}

}  // namespace
}  // namespace sonde::analysis
