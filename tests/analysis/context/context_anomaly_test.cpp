// Anomaly detection with and without calling context on a planted workload:
// `lookup` takes ~100 ns from the frequent caller A (90 % of calls) and
// ~1000 ns from the rare caller B (10 %): normal behaviour that a
// per-operation fence flags. One planted real anomaly: a single A call of
// 50,000 ns.
#include "analysis/context/context_anomaly.hpp"

#include <gtest/gtest.h>

#include "context/context_fixtures.hpp"

namespace sonde::test {
namespace {

TEST(ContextAnomaly, ContextRemovesFalseAlarmsAndKeepsTheRealOne) {
  analysis::ContextCollector c;
  int64_t id = 0;
  for (int i = 0; i < 900; ++i) {
    const int64_t d = i == 450 ? 50000 : 100 + i % 5;
    add_trace(c, {{"A", 0, 100000}, {"lookup", 1, d}}, id++);
  }
  for (int i = 0; i < 100; ++i) add_trace(c, {{"B", 0, 100000}, {"lookup", 1, 1000 + i % 5}}, id++);
  const auto data = c.take();
  const analysis::ContextIndex index(data);
  analysis::ContextTree tree(data, index);
  tree.apply_operators({});
  const auto report = analysis::detect_anomalies(data, tree, 3, 5);
  // Without context: the 100 B calls and the planted anomaly.
  EXPECT_EQ(report.operation_alarms, 101u);
  // With context: only the planted anomaly.
  EXPECT_EQ(report.context_alarms, 1u);
  EXPECT_EQ(report.both, 1u);
  ASSERT_EQ(report.top.size(), 1u);
  const auto& worst = data.observations[report.top[0].observation];
  EXPECT_EQ(worst.duration, 50000);
  EXPECT_EQ(worst.trace_id, 450);
  ASSERT_EQ(report.traces.size(), 1u);
  EXPECT_EQ(report.traces[0].trace_id, 450);
}

}  // namespace
}  // namespace sonde::test
