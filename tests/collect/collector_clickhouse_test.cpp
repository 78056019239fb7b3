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
#include "store/clickhouse_client.hpp"
#include "store/clickhouse_store.hpp"
#include "store/index_build.hpp"
#include "store/index_sink.hpp"
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
  EXPECT_EQ(counts["shop.recurse"], runs * (depth + 1));
  EXPECT_EQ(counts["shop.leaf"], runs);
  EXPECT_EQ(counts["shop.fail"], uint64_t{processes} * threads);

  // The same records, indexed into SQLite from the kept logs.
  TempDir sqlite_dir("sonde-collect");
  ASSERT_EQ(store::build_index_from_log(logs / "log", sqlite_dir.path()).error, "");
  auto sq = store::SqliteStore::open(sqlite_dir.path(), &error);
  ASSERT_NE(sq, nullptr) << error;
  store::test::expect_same_answers(*sq, *ch, "recurse");
}

// "SELECT ..." in the database of `url`: its first row's fields.
std::vector<std::string> first_row(const std::string& url, const std::string& sql) {
  store::ClickHouseUrl parsed;
  EXPECT_EQ(store::parse_clickhouse_url(url, &parsed), "");
  store::ClickHouseClient client(parsed);
  std::string result;
  EXPECT_EQ(client.query(sql, &result), "") << sql;
  const auto rows = store::ClickHouseClient::parse_rows(result);
  return rows.empty() ? std::vector<std::string>{} : rows[0];
}

// One collector with `id` serving `processes` workload processes into `url`.
std::vector<ClientReport> collect_workloads(const std::string& url, uint32_t id, int processes,
                                            int threads, int iterations, int depth) {
  CollectorOptions o;
  o.out = url;
  o.collector_id = id;
  o.listen.port = 0;
  o.listen.stop_after_connections = processes;
  Collector collector(o);
  if (const std::string e = collector.open(); !e.empty()) {
    ADD_FAILURE() << "collector " << id << ": " << e;
    return {};
  }
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  expect_clean_exits(spawn_workloads(collector.port(), processes, threads, iterations, depth));
  serving.join();
  EXPECT_EQ(collector.finish(), "");
  return collector.clients();
}

// Two collectors (ids 1 and 2) fill one database at the same time, then
// collector 1 is started again and appends: every trace of every process
// is stored exactly once, each collector's rows and clients lie in its own
// id range, and no id is handed out twice.
TEST(CollectorClickHouse, TwoCollectorsFillOneDatabaseWithExactCounts) {
  store::test::ClickHouseServer server;
  ASSERT_EQ(server.error(), "");
  const std::string url = server.url("shared");
  const int processes = 2, threads = 2, iterations = 150, depth = 1;
  std::vector<ClientReport> first, second, again;
  std::thread one(
      [&] { first = collect_workloads(url, 1, processes, threads, iterations, depth); });
  std::thread two(
      [&] { second = collect_workloads(url, 2, processes, threads, iterations, depth); });
  one.join();
  two.join();
  again = collect_workloads(url, 1, processes, threads, iterations, depth);

  // Per process (workload.cpp; as in the first test).
  const uint64_t traces = uint64_t{threads} * (2 * iterations + 1);
  const uint64_t calls = uint64_t{threads} * iterations * (depth + 2) + threads;
  const uint64_t records = traces + 2 * calls + 1;
  auto client_ids = [&](const std::vector<ClientReport>& clients) {
    std::vector<int64_t> ids;
    for (const ClientReport& c : clients) {
      EXPECT_EQ(c.record.received, records);
      EXPECT_EQ(c.record.stored, records);
      EXPECT_EQ(c.traces, traces);
      ids.push_back(c.record.id);
    }
    return ids;
  };
  ASSERT_EQ(first.size(), static_cast<size_t>(processes));
  ASSERT_EQ(second.size(), static_cast<size_t>(processes));
  ASSERT_EQ(again.size(), static_cast<size_t>(processes));
  for (int64_t id : client_ids(first)) EXPECT_EQ(id >> 32, 1) << id;
  for (int64_t id : client_ids(second)) EXPECT_EQ(id >> 32, 2) << id;
  for (int64_t id : client_ids(again)) EXPECT_EQ(id >> 32, 1) << id;
  // The restarted collector continues after its own clients.
  for (const ClientReport& c : again)
    for (const ClientReport& earlier : first) EXPECT_GT(c.record.id, earlier.record.id);

  const uint64_t all_traces = 3 * processes * traces;
  const auto totals =
      first_row(url, "SELECT count(), uniqExact(id), uniqExact(client) FROM traces");
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[0], std::to_string(all_traces));
  EXPECT_EQ(totals[1], std::to_string(all_traces));  // no row id twice
  EXPECT_EQ(totals[2], std::to_string(3 * processes));
  const auto by_range = first_row(
      url,
      "SELECT countIf(bitShiftRight(id, 48) = 1), countIf(bitShiftRight(id, 48) = 2), "
      "countIf(bitShiftRight(id, 48) = 1 AND bitShiftRight(client, 32) != 1) + "
      "countIf(bitShiftRight(id, 48) = 2 AND bitShiftRight(client, 32) != 2) FROM traces");
  ASSERT_EQ(by_range.size(), 3u);
  EXPECT_EQ(by_range[0], std::to_string(2 * processes * traces));
  EXPECT_EQ(by_range[1], std::to_string(processes * traces));
  EXPECT_EQ(by_range[2], "0");
  const auto executions = first_row(url, "SELECT count(), uniqExact(trace) FROM executions");
  ASSERT_EQ(executions.size(), 2u);
  EXPECT_EQ(executions[0], std::to_string(3 * processes * calls));
  EXPECT_EQ(executions[1], std::to_string(all_traces));  // every trace has its executions

  std::string error;
  auto ch = store::ClickHouseStore::open(url, &error);
  ASSERT_NE(ch, nullptr) << error;
  EXPECT_EQ(ch->info().traces, all_traces);
  EXPECT_EQ(ch->info().executions, 3 * processes * calls);
}

// The last collector id opens (its range ends one short of 2^64); one past
// it, or any id with a directory store, is refused naming the problem.
TEST(CollectorClickHouse, CollectorIdsOutOfRangeOrWithoutClickHouseAreRefused) {
  store::test::ClickHouseServer server;
  ASSERT_EQ(server.error(), "");
  std::string error;
  EXPECT_NE(store::open_trace_index(server.url("ids"), &error, 65535), nullptr) << error;
  EXPECT_EQ(error, "");
  EXPECT_EQ(store::open_trace_index(server.url("ids"), &error, 65536), nullptr);
  EXPECT_NE(error.find("collector id 65536 is out of range"), std::string::npos) << error;
  TempDir dir("sonde-collect");
  error.clear();
  EXPECT_EQ(store::open_trace_index(dir.path(), &error, 3), nullptr);
  EXPECT_NE(error.find("has one collector"), std::string::npos) << error;
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
