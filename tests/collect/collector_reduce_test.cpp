// `sonde collect --reduce`: the collector stores reduced traces (MooBench's
// D stage) instead of every trace, and still accounts for every one: the
// reduced traces' counts add up to the traces reconstructed, and the
// operation statistics and call edges equal those of a collector that
// stored every trace.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../format/format_test_support.hpp"
#include "collect/collector.hpp"
#include "collector_test_support.hpp"
#include "format/log_reader.hpp"
#include "store/execution_blob.hpp"
#include "store/sqlite_db.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;

// Streams the bookstore log from `clients` connections, one after another.
std::vector<ClientReport> collect_bookstore(const std::string& dir, int clients, bool reduce,
                                            std::string* error) {
  Encoder bookstore;
  EXPECT_TRUE(
      format::read_log(format::test::testdata("kieker/bookstore-oer-2010/log"), bookstore).ok);
  CollectorOptions o;
  o.out = dir;
  o.listen.port = 0;
  o.listen.stop_after_connections = static_cast<uint64_t>(clients);
  o.reduce = reduce;
  Collector collector(o);
  *error = collector.open();
  if (!error->empty()) return {};
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  for (int i = 0; i < clients; ++i) {
    const int fd = connect_to(collector.port());
    EXPECT_TRUE(send_all(fd, bookstore.bytes));
    ::close(fd);
  }
  serving.join();
  *error = collector.finish();
  return collector.clients();
}

TEST(CollectorReduce, ReducedTracesAccountForEveryTraceAndKeepTheStatistics) {
  TempDir plain_dir("sonde-collect"), reduced_dir("sonde-collect");
  const int clients = 3;
  std::string error;
  const auto plain = collect_bookstore(plain_dir.path(), clients, false, &error);
  ASSERT_EQ(error, "");
  const auto reduced = collect_bookstore(reduced_dir.path(), clients, true, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(reduced.size(), static_cast<size_t>(clients));
  for (size_t i = 0; i < reduced.size(); ++i) {
    EXPECT_EQ(reduced[i].traces, plain[i].traces);
    EXPECT_EQ(reduced[i].invalid_traces, 0u);
    EXPECT_GT(reduced[i].reduced_traces, 0u);
    // The point of reduction: far fewer rows than traces.
    EXPECT_LT(reduced[i].reduced_traces, reduced[i].traces);
  }

  store::SqliteDb db;
  ASSERT_EQ(db.open(reduced_dir / "index.sqlite", SQLITE_OPEN_READONLY), "");
  store::SqliteStatement sums(db,
                              "SELECT COUNT(*), SUM(traces), COUNT(DISTINCT client) FROM "
                              "reduced_traces");
  ASSERT_TRUE(sums.step()) << sums.error();
  uint64_t rows = 0;
  for (const ClientReport& c : reduced) rows += c.reduced_traces;
  EXPECT_EQ(static_cast<uint64_t>(sums.int64(0)), rows);
  EXPECT_EQ(static_cast<uint64_t>(sums.int64(1)), clients * plain[0].traces);
  EXPECT_EQ(sums.int64(2), clients);
  store::SqliteStatement individually(db, "SELECT COALESCE(SUM(traces), 0) FROM trace_batches");
  ASSERT_TRUE(individually.step());
  EXPECT_EQ(individually.int64(0), 0);  // only invalid traces would be stored one by one

  // Every reduced trace's positions read back; their counts bound the failures.
  std::vector<std::string> names{std::string()};
  store::SqliteStatement name_rows(db, "SELECT id, text FROM names ORDER BY id");
  while (name_rows.step()) {
    names.resize(static_cast<size_t>(name_rows.int64(0)) + 1);
    names.back() = name_rows.text(1);
  }
  store::SqliteStatement data(db, "SELECT traces, min_ns, max_ns, data FROM reduced_traces");
  size_t read = 0;
  while (data.step()) {
    std::vector<analysis::ReducedExecution> positions;
    ASSERT_EQ(
        store::unpack_reduced_executions(
            data.blob(3),
            [&names](uint64_t id) { return id < names.size() ? &names[id] : nullptr; }, positions),
        "");
    ASSERT_FALSE(positions.empty());
    EXPECT_LE(data.int64(1), data.int64(2));
    for (const auto& p : positions) EXPECT_LE(p.failed, static_cast<uint64_t>(data.int64(0)));
    ++read;
  }
  EXPECT_EQ(read, rows);

  // Statistics and edges come from every trace, reduced or not.
  std::string e1, e2;
  auto plain_store = store::SqliteStore::open(plain_dir.path(), &e1);
  auto reduced_store = store::SqliteStore::open(reduced_dir.path(), &e2);
  ASSERT_NE(plain_store, nullptr) << e1;
  ASSERT_NE(reduced_store, nullptr) << e2;
  const auto plain_ops = plain_store->operations();
  const auto reduced_ops = reduced_store->operations();
  ASSERT_EQ(reduced_ops.size(), plain_ops.size());
  for (size_t i = 0; i < plain_ops.size(); ++i) {
    EXPECT_EQ(reduced_ops[i].operation, plain_ops[i].operation);
    EXPECT_EQ(reduced_ops[i].count, plain_ops[i].count);
    EXPECT_EQ(reduced_ops[i].p99, plain_ops[i].p99);
  }
  EXPECT_EQ(reduced_store->call_edges().size(), plain_store->call_edges().size());
}

TEST(CollectorReduce, AReducedStoreIsNotAppendedToAndClickHouseIsRefused) {
  TempDir dir("sonde-collect");
  std::string error;
  collect_bookstore(dir.path(), 1, true, &error);
  ASSERT_EQ(error, "");
  collect_bookstore(dir.path(), 1, false, &error);
  EXPECT_NE(error.find("holds reduced traces"), std::string::npos) << error;
  EXPECT_NE(error.find("index.sqlite"), std::string::npos) << error;

  CollectorOptions o;
  o.out = "clickhouse://127.0.0.1:1/db";
  o.reduce = true;
  Collector collector(o);
  const std::string refused = collector.open();
  EXPECT_NE(refused.find("--reduce works with the embedded store only"), std::string::npos)
      << refused;
}

}  // namespace
}  // namespace sonde::collect
