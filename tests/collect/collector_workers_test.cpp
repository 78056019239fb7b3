// The collector's analysis workers: several workers reconstruct different
// clients' traces at once, and a backlog bound far smaller than what the
// clients send holds receiving back without losing a record or a trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "../format/format_test_support.hpp"
#include "collector_test_support.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;
namespace fs = std::filesystem;

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

// A log the worker cannot read back (here: deleted under the collector)
// makes its client's error at once, while the connection is still open,
// and stops nothing else: the collector finishes without an error.
TEST(CollectorWorkers, ALogThatCannotBeReadBackIsTheClientsErrorAtOnceAndNotTheCollectors) {
  TempDir dir("sonde-collect-readback");
  CollectorOptions o = RunningCollector::options(dir.path(), 1);
  o.commit_interval = std::chrono::milliseconds(20);
  RunningCollector running(o);
  ASSERT_EQ(running.open_error(), "");

  format::StringSink sink;
  format::NativeWriter w(sink, {format::native::Codec::kZstd, 1, 1u << 20, false, false});
  preamble(w, "readback/1", "1");
  define_main_thread(w, 7);
  const auto chunk_of_traces = [&](uint64_t first) {
    w.begin_events(0, first * 10);
    for (uint64_t t = first; t < first + 10; ++t) {
      w.trace_begin(t * 10, t, -1, -1);
      w.enter(t * 10 + 1, 0);
      w.exit(t * 10 + 2, 0);
    }
    w.end_events();
    w.flush(true);
  };
  chunk_of_traces(1);
  const int fd = connect_to(running.port());
  ASSERT_TRUE(send_all(fd, format::NativeWriter::file_header() + sink.bytes));
  sink.bytes.clear();

  const fs::path log = fs::path(dir.path()) / "log" / "client-1.sonde";
  const fs::path stats = fs::path(dir.path()) / "collect-stats.json";
  const auto wait_for = [](const std::function<bool()>& done) {
    for (int i = 0; i < 500 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
  };
  const auto client_error = [&] {
    std::ifstream in(stats);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || j["clients"].empty()) return std::string();
    return j["clients"][0]["error"].get<std::string>();
  };
  // The first chunk stored and read back: its traces are counted.
  ASSERT_TRUE(wait_for([&] {
    std::ifstream in(stats);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    return !j.is_discarded() && j["traces"].get<uint64_t>() >= 9;
  }));
  ASSERT_TRUE(fs::remove(log));
  chunk_of_traces(11);
  ASSERT_TRUE(send_all(fd, sink.bytes));
  // Still connected: the error is there already.
  ASSERT_TRUE(wait_for([&] { return !client_error().empty(); }));
  EXPECT_NE(client_error().find("cannot read " + log.string() + " back"), std::string::npos)
      << client_error();
  ::shutdown(fd, SHUT_WR);
  char drain[64];
  while (::read(fd, drain, sizeof drain) > 0) {
  }
  ::close(fd);
  EXPECT_EQ(running.join(), "");
  const ClientReport c = running.collector().clients().at(0);
  EXPECT_EQ(c.record.received, c.record.stored);
  EXPECT_NE(c.record.error.find("cannot read"), std::string::npos) << c.record.error;
}

}  // namespace
}  // namespace sonde::collect
