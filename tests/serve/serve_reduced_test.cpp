// GET /api/reduced and /api/reduced/ID over real TCP on loopback, on the
// store a reducing collector (`sonde collect --reduce`, in-process, real
// Kieker TCP streams of the bookstore log) wrote: the reduced traces add
// up to every valid trace each client sent, filters and pages cover them
// exactly once, one reduced trace comes with its call positions, bad
// parameters give 400 naming them, and a store without reduced traces
// says so. Expected counts come from reading the log into the in-memory
// store, never from the collector.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "../collect/collector_test_support.hpp"
#include "../format/format_test_support.hpp"
#include "collect/collector.hpp"
#include "format/log_reader.hpp"
#include "http_get.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::serve::test {
namespace {

using nlohmann::json;

constexpr int kReducedApiClients = 2;

// Streams the bookstore log from kReducedApiClients connections, one after
// another, into a collector with --reduce 1s writing DIR; returns its error.
std::string reduced_api_collect(const std::string& dir) {
  collect::Encoder bookstore;
  if (!format::read_log(bookstore_log(), bookstore).ok) return "cannot read the bookstore log";
  collect::CollectorOptions o;
  o.out = dir;
  o.listen.port = 0;
  o.listen.stop_after_connections = kReducedApiClients;
  o.reduce = true;
  collect::Collector collector(o);
  if (std::string e = collector.open(); !e.empty()) return e;
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  for (int i = 0; i < kReducedApiClients; ++i) {
    const int fd = collect::connect_to(collector.port());
    EXPECT_TRUE(collect::send_all(fd, bookstore.bytes));
    ::close(fd);
  }
  serving.join();
  return collector.finish();
}

class ServeReducedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reference_ = new store::MemoryStore(bookstore_log());
    dir_ = new format::test::TempDir("sonde-serve-reduced");
    ASSERT_EQ(reduced_api_collect(dir_->path()), "");
    std::string error;
    store_ = store::SqliteStore::open(dir_->path(), &error).release();
    ASSERT_NE(store_, nullptr) << error;
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
    delete reference_;
  }
  void SetUp() override {
    ServeOptions o;
    o.port = 0;
    server_ = std::make_unique<RunningServer>(*store_, o);
  }
  json get(const std::string& target, int expect_status = 200) {
    const HttpReply r = http_get(server_->port(), target);
    EXPECT_EQ(r.status, expect_status) << target << ": " << r.body;
    EXPECT_EQ(r.header("content-type"), "application/json") << target;
    return json::parse(r.body);
  }
  // Every row the query matches, page by page (`page` rows at a time).
  std::vector<json> every_row(const std::string& query, size_t page) {
    std::vector<json> rows;
    uint64_t matched = 0;
    do {
      const json body = get("/api/reduced?limit=" + std::to_string(page) +
                            "&offset=" + std::to_string(rows.size()) + query);
      matched = body["matched"].get<uint64_t>();
      if (body["reduced"].empty()) break;
      for (const json& r : body["reduced"]) rows.push_back(r);
    } while (rows.size() < matched);
    EXPECT_EQ(rows.size(), matched) << query;
    return rows;
  }
  static uint64_t traces_in(const std::vector<json>& rows) {
    uint64_t n = 0;
    for (const json& r : rows) n += r["traces"].get<uint64_t>();
    return n;
  }
  static uint64_t valid_sent() { return kReducedApiClients * reference_->info().traces; }

  inline static store::MemoryStore* reference_ = nullptr;
  inline static format::test::TempDir* dir_ = nullptr;
  inline static store::SqliteStore* store_ = nullptr;
  std::unique_ptr<RunningServer> server_;
};

TEST_F(ServeReducedTest, InfoSaysTheStoreIsReducedAndHowMuch) {
  const json info = get("/api/info");
  EXPECT_EQ(info["reduced"], true);
  EXPECT_EQ(info["reduced_from_traces"].get<uint64_t>(), valid_sent());
  EXPECT_EQ(info["traces"], 0);  // valid traces are stored reduced only
  EXPECT_EQ(info["invalid_traces"].get<uint64_t>(),
            kReducedApiClients * reference_->info().invalid_traces);
  const json all = get("/api/reduced?limit=0");
  EXPECT_EQ(info["reduced_traces"], all["matched"]);
  EXPECT_GT(all["matched"].get<uint64_t>(), 0u);
  EXPECT_LT(all["matched"].get<uint64_t>(), valid_sent());  // merging happened
}

TEST_F(ServeReducedTest, PagesCoverEveryReducedTraceOnceAndAddUp) {
  const std::vector<json> rows = every_row("", 7);
  EXPECT_EQ(traces_in(rows), valid_sent());
  std::set<int64_t> ids;
  for (size_t k = 0; k < rows.size(); ++k) {
    ids.insert(rows[k]["id"].get<int64_t>());
    if (k > 0) {  // default order: most traces first
      EXPECT_GE(rows[k - 1]["traces"].get<uint64_t>(), rows[k]["traces"].get<uint64_t>()) << k;
    }
    EXPECT_LE(rows[k]["min_ns"].get<double>(), rows[k]["mean_ns"].get<double>());
    EXPECT_LE(rows[k]["mean_ns"].get<double>(), rows[k]["max_ns"].get<double>());
    EXPECT_LE(rows[k]["failed_traces"].get<uint64_t>(), rows[k]["traces"].get<uint64_t>());
  }
  EXPECT_EQ(ids.size(), rows.size());
  const std::vector<json> by_start = every_row("&order=start", 500);
  for (size_t k = 1; k < by_start.size(); ++k) {
    EXPECT_LE(by_start[k - 1]["first_start_ns"].get<int64_t>(),
              by_start[k]["first_start_ns"].get<int64_t>());
  }
  EXPECT_EQ(traces_in(by_start), valid_sent());
}

TEST_F(ServeReducedTest, FiltersPartitionTheTraces) {
  // Every root operation: the rows of each add up to the whole.
  const std::vector<json> rows = every_row("&order=start", 1000);
  std::set<std::string> roots;
  for (const json& r : rows) roots.insert(r["root_operation"].get<std::string>());
  uint64_t sum = 0, matched = 0;
  for (const std::string& root : roots) {
    const std::vector<json> one = every_row("&operation=" + store::url_encode(root), 1000);
    for (const json& r : one) {
      EXPECT_NE(r["root_operation"].get<std::string>().find(root), std::string::npos);
    }
    // Substrings may match longer names too: count only the exact ones.
    for (const json& r : one) {
      if (r["root_operation"] == root) sum += r["traces"].get<uint64_t>(), ++matched;
    }
  }
  EXPECT_EQ(sum, valid_sent());
  EXPECT_EQ(matched, rows.size());
  // min_count keeps exactly the rows with that many traces or more.
  const uint64_t threshold = rows.front()["traces"].get<uint64_t>() + 1;
  uint64_t want = 0;
  for (const json& r : rows) want += r["traces"].get<uint64_t>() >= threshold ? 1 : 0;
  EXPECT_EQ(get("/api/reduced?limit=0&min_count=" + std::to_string(threshold))["matched"], want);
  // A window from the first row's start to itself holds the rows starting then.
  const int64_t t = rows.front()["first_start_ns"].get<int64_t>();
  want = 0;
  for (const json& r : rows) want += r["first_start_ns"].get<int64_t>() == t ? 1 : 0;
  EXPECT_EQ(
      get("/api/reduced?limit=0&from=" + std::to_string(t) + "&to=" + std::to_string(t))["matched"],
      want);
  const std::string host = rows.front()["host"].get<std::string>();
  want = 0;
  for (const json& r : rows) want += r["host"] == host ? 1 : 0;
  EXPECT_EQ(get("/api/reduced?limit=0&host=" + store::url_encode(host))["matched"], want);
  EXPECT_EQ(get("/api/reduced?limit=0&host=no-such-host")["matched"], 0);
}

TEST_F(ServeReducedTest, OneReducedTraceHasItsCallTree) {
  const json list = get("/api/reduced?limit=1");
  ASSERT_EQ(list["reduced"].size(), 1u);
  const json& entry = list["reduced"][0];
  const json one = get("/api/reduced/" + std::to_string(entry["id"].get<int64_t>()));
  for (const char* key : {"id", "first_trace_id", "root_operation", "host", "traces",
                          "failed_traces", "first_start_ns", "last_start_ns"}) {
    EXPECT_EQ(one[key], entry[key]) << key;
  }
  const json& calls = one["calls"];
  ASSERT_GT(calls.size(), 0u);
  EXPECT_EQ(calls[0]["operation"], entry["root_operation"]);
  EXPECT_EQ(calls[0]["ess"], 0);
  // Exclusive means add up to the root's mean (each position's mean is
  // counted once as itself and subtracted once from its caller).
  double exclusive = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i]["eoi"], static_cast<int>(i));
    EXPECT_LE(calls[i]["failed"].get<uint64_t>(), entry["traces"].get<uint64_t>());
    exclusive += calls[i]["mean_exclusive_ns"].get<double>();
  }
  EXPECT_DOUBLE_EQ(exclusive, calls[0]["mean_ns"].get<double>());
  EXPECT_EQ(get("/api/reduced/999999999", 404).count("error"), 1u);
}

TEST_F(ServeReducedTest, BadParametersAreRejectedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {"/api/reduced?limit=abc", "limit"},
      {"/api/reduced?limit=1001", "limit"},
      {"/api/reduced?offset=-1", "offset"},
      {"/api/reduced?min_count=1.5", "min_count"},
      {"/api/reduced?min_count=-2", "min_count"},
      {"/api/reduced?from=yesterday", "from"},
      {"/api/reduced?from=10&to=5", "to"},
      {"/api/reduced?order=duration", "order"},
      {"/api/reduced?host=a&host=b", "host"},
      {"/api/reduced?min_ns=5", "min_ns"},
      {"/api/reduced/abc", "id"},
      {"/api/reduced/1?verbose=1", "verbose"},
  };
  for (const auto& [target, parameter] : cases) {
    const json body = get(target, 400);
    EXPECT_EQ(body["parameter"], parameter) << target;
    EXPECT_NE(body["error"].get<std::string>().find(parameter), std::string::npos) << target;
  }
  const json long_text = get("/api/reduced?operation=" + std::string(5000, 'x'), 400);
  EXPECT_EQ(long_text["parameter"], "operation");
}

// A damaged BLOB: the API answers 500 naming the row, and the list still works.
TEST_F(ServeReducedTest, ADamagedRowIsNamed) {
  const json list = get("/api/reduced?limit=1&order=start");
  const int64_t id = list["reduced"][0]["id"].get<int64_t>();
  format::test::TempDir copy_dir("sonde-serve-reduced");
  std::filesystem::copy(dir_->path() + "/index.sqlite", copy_dir / "index.sqlite");
  {
    store::SqliteDb db;
    ASSERT_EQ(db.open(copy_dir / "index.sqlite", SQLITE_OPEN_READWRITE), "");
    ASSERT_EQ(db.exec("UPDATE reduced_traces SET data = x'0102' WHERE id = " + std::to_string(id)),
              "");
  }
  std::string error;
  auto damaged = store::SqliteStore::open(copy_dir.path(), &error);
  ASSERT_NE(damaged, nullptr) << error;
  ServeOptions o;
  o.port = 0;
  RunningServer server(*damaged, o);
  const HttpReply r = http_get(server.port(), "/api/reduced/" + std::to_string(id));
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("reduced trace row " + std::to_string(id) + ": truncated position 0"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(http_get(server.port(), "/api/reduced?limit=0").status, 200);
}

TEST(ServeReducedUnsupported, AStoreWithoutReducedTracesSaysSo) {
  store::MemoryStore memory(bookstore_log());
  ServeOptions o;
  o.port = 0;
  RunningServer server(memory, o);
  const HttpReply info = http_get(server.port(), "/api/info");
  ASSERT_EQ(info.status, 200);
  const json i = json::parse(info.body);
  EXPECT_EQ(i["reduced"], false);
  EXPECT_EQ(i["reduced_traces"], 0);
  for (const char* target : {"/api/reduced", "/api/reduced/1"}) {
    const HttpReply r = http_get(server.port(), target);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_NE(r.body.find("sonde collect --reduce"), std::string::npos) << r.body;
  }
}

}  // namespace
}  // namespace sonde::serve::test
