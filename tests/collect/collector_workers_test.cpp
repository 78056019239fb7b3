// The collector's analysis workers: several workers reconstruct different
// clients' traces at once, and a backlog bound far smaller than what the
// clients send holds receiving back without losing a record or a trace.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../format/format_test_support.hpp"
#include "collector_test_support.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;

struct Expected {
  uint64_t traces, executions, records;
};
// Per process of spawn_workloads (tests/monitor/programs/workload.cpp).
Expected per_process(int threads, int iterations, int depth) {
  const uint64_t traces = uint64_t(threads) * (2 * iterations + 1);
  const uint64_t calls = uint64_t(threads) * iterations * (depth + 2) + threads;
  return {traces, calls, traces + 2 * calls + 1};
}

void expect_every_client_complete(const Collector& collector, const Expected& want,
                                  size_t processes) {
  const auto clients = collector.clients();
  ASSERT_EQ(clients.size(), processes);
  for (const ClientReport& c : clients) {
    SCOPED_TRACE(c.record.peer + " " + c.protocol);
    EXPECT_EQ(c.record.received, want.records);
    EXPECT_EQ(c.record.stored, want.records);
    EXPECT_EQ(c.record.error, "");
    EXPECT_EQ(c.traces, want.traces);
    EXPECT_EQ(c.invalid_traces, 0u);
    EXPECT_FALSE(c.open);
  }
  EXPECT_EQ(collector.backlog_bytes(), 0u);
}

TEST(CollectorWorkers, TwoWorkersIndexEveryTraceOfEveryProcess) {
  TempDir dir("sonde-collect-workers");
  const int processes = 6, threads = 2, iterations = 400, depth = 3;
  CollectorOptions o = RunningCollector::options(dir.path(), processes);
  o.workers = 2;
  RunningCollector running(o);
  ASSERT_EQ(running.open_error(), "");
  expect_clean_exits(
      spawn_workloads(running.port(), processes, threads, iterations, depth, "mixed"));
  ASSERT_EQ(running.join(), "");

  const Expected want = per_process(threads, iterations, depth);
  expect_every_client_complete(running.collector(), want, processes);
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, processes * want.traces);
  EXPECT_EQ(store->info().executions, processes * want.executions);
  std::ifstream in(dir / "collect-stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in);
  EXPECT_EQ(stats["traces"].get<uint64_t>(), processes * want.traces);
  EXPECT_EQ(stats["backlog_bytes"].get<uint64_t>(), 0u);
}

TEST(CollectorWorkers, ABacklogBoundSmallerThanAChunkHoldsReceivingBackAndLosesNothing) {
  TempDir dir("sonde-collect-backlog");
  const int processes = 4, threads = 2, iterations = 3000, depth = 3;
  CollectorOptions o = RunningCollector::options(dir.path(), processes);
  o.workers = 1;
  o.max_backlog_bytes = 1024;  // every flushed chunk is over it
  RunningCollector running(o);
  ASSERT_EQ(running.open_error(), "");
  expect_clean_exits(spawn_workloads(running.port(), processes, threads, iterations, depth));
  ASSERT_EQ(running.join(), "");

  const Expected want = per_process(threads, iterations, depth);
  expect_every_client_complete(running.collector(), want, processes);
  // The bound was reached (and the listener waited) at least once.
  EXPECT_GT(running.collector().peak_backlog_bytes(), o.max_backlog_bytes);
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, processes * want.traces);
}

}  // namespace
}  // namespace sonde::collect
