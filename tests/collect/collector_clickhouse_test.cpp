// The collector with ClickHouse as the store: monitored processes stream
// concurrently, every record arrives (counts from the workload's
// arguments), and the ClickHouse store answers the UI's queries exactly as
// the SQLite store built from the same records (the logs the collector kept
// with --log-dir).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <thread>

#include "../format/format_test_support.hpp"
#include "../store/clickhouse_compare.hpp"
#include "../store/clickhouse_server.hpp"
#include "collect/collector.hpp"
#include "collector_test_support.hpp"
#include "format/log_reader.hpp"
#include "store/clickhouse_store.hpp"
#include "store/index_build.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;

TEST(CollectorClickHouse, MonitoredProcessesLandInClickHouseLikeInSqlite) {
  store::test::ClickHouseServer server;
  ASSERT_EQ(server.error(), "");
  TempDir logs("sonde-collect");
  const int processes = 3, threads = 2, iterations = 200, depth = 2;
  CollectorOptions o;
  o.out = server.url("collected");
  o.log_dir = logs.path();
  o.listen.port = 0;
  o.listen.stop_after_connections = processes;
  Collector collector(o);
  ASSERT_EQ(collector.open(), "");
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });

  expect_clean_exits(spawn_workloads(collector.port(), processes, threads, iterations, depth));
  serving.join();
  ASSERT_EQ(collector.finish(), "");

  // workload.cpp: 2 traces per iteration and thread plus a failing call per
  // thread; a before and an after event per call; one metadata record.
  const uint64_t traces = uint64_t{threads} * (2 * iterations + 1);
  const uint64_t calls = uint64_t{threads} * iterations * (depth + 2) + threads;
  const uint64_t records = traces + 2 * calls + 1;
  for (const ClientReport& c : collector.clients()) {
    EXPECT_EQ(c.record.received, records);
    EXPECT_EQ(c.record.stored, records);
    EXPECT_EQ(c.traces, traces);
  }

  std::string error;
  auto ch = store::ClickHouseStore::open(o.out, &error);
  ASSERT_NE(ch, nullptr) << error;
  EXPECT_EQ(ch->info().traces, processes * traces);
  EXPECT_EQ(ch->info().executions, processes * calls);
  std::map<std::string, uint64_t> counts;
  for (const auto& op : ch->operations()) counts[op.operation] = op.count;
  const uint64_t runs = uint64_t{processes} * threads * iterations;
  EXPECT_EQ(counts["shop.recurse()"], runs * (depth + 1));
  EXPECT_EQ(counts["shop.leaf()"], runs);
  EXPECT_EQ(counts["shop.fail()"], uint64_t{processes} * threads);

  // The same records, indexed into SQLite from the kept logs.
  TempDir sqlite_dir("sonde-collect");
  ASSERT_EQ(store::build_index_from_log(logs / "log", sqlite_dir.path()).error, "");
  auto sq = store::SqliteStore::open(sqlite_dir.path(), &error);
  ASSERT_NE(sq, nullptr) << error;
  store::test::expect_same_answers(*sq, *ch, "recurse");
}

// The server goes away while a client is connected: the collector stops
// with an error naming ClickHouse instead of receiving into nowhere.
TEST(CollectorClickHouse, LostServerStopsTheCollectorWithItsError) {
  store::test::ClickHouseServer server;
  ASSERT_EQ(server.error(), "");
  CollectorOptions o;
  o.out = server.url("lost");
  o.listen.port = 0;
  o.commit_interval = std::chrono::milliseconds(20);
  Collector collector(o);
  ASSERT_EQ(collector.open(), "");
  server.stop(SIGKILL);
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  Encoder bookstore;
  ASSERT_TRUE(
      format::read_log(format::test::testdata("kieker/bookstore-oer-2010/log"), bookstore).ok);
  const int fd = connect_to(collector.port());
  send_all(fd, bookstore.bytes);
  // No stop request and the connection stays open: the failed store ends run().
  serving.join();
  ::close(fd);
  const std::string error = collector.finish();
  EXPECT_NE(error.find("ClickHouse at 127.0.0.1:"), std::string::npos) << error;
  ASSERT_EQ(collector.clients().size(), 1u);
  EXPECT_GT(collector.clients()[0].record.received, 0u);
}

}  // namespace
}  // namespace sonde::collect
