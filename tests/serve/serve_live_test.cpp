// GET /api/live over real TCP while a collector (in-process, loopback, port
// 0) receives real Kieker TCP streams of the bookstore log: per-client
// counts reach what each client sent, the traces after a cursor are exactly
// the ones stored since, newest first and bounded; bad parameters give 400
// naming them; a server that is not on a collector's directory answers 404.
// Expected counts come from the encoded stream and from reading the log
// into the in-memory store, never from the collector.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "../collect/collector_test_support.hpp"
#include "../format/format_test_support.hpp"
#include "collect/collector.hpp"
#include "format/log_reader.hpp"
#include "http_get.hpp"
#include "serve/live_api.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::serve::test {
namespace {

using nlohmann::json;

// A collector on its own thread until the test ends.
class LiveCollector {
 public:
  explicit LiveCollector(const std::string& dir, bool reduce = false) {
    collect::CollectorOptions o;
    o.out = dir;
    o.reduce = reduce;
    o.listen.port = 0;
    o.commit_interval = std::chrono::milliseconds(100);
    collector_ = std::make_unique<collect::Collector>(o);
    error_ = collector_->open();
    if (error_.empty()) thread_ = std::thread([this] { collector_->run(stop_); });
  }
  ~LiveCollector() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    collector_->finish();
  }
  const std::string& open_error() const { return error_; }
  uint16_t port() const { return collector_->port(); }

 private:
  std::unique_ptr<collect::Collector> collector_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string error_;
};

json live_json(int port, const std::string& query = "") {
  const HttpReply r = http_get(port, "/api/live" + query);
  EXPECT_EQ(r.status, 200) << query << ": " << r.body;
  return r.status == 200 ? json::parse(r.body) : json::object();
}

// Polls /api/live until `done` holds for it (the collector commits every
// 100 ms); fails after 60 s. Waiting for a state, not timing it.
json live_until(int port, const std::function<bool(const json&)>& done) {
  json last;
  for (int i = 0; i < 1200; ++i) {
    last = live_json(port, "?limit=0");
    if (done(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "/api/live never reached the expected state: " << last.dump(2);
  return last;
}

// `n` clients each send the whole stream concurrently and close.
void send_from_clients(uint16_t port, const std::string& bytes, int n) {
  std::vector<std::thread> senders;
  for (int i = 0; i < n; ++i) {
    senders.emplace_back([&] {
      const int fd = collect::connect_to(port);
      EXPECT_TRUE(collect::send_all(fd, bytes));
      ::close(fd);
    });
  }
  for (auto& t : senders) t.join();
}

bool all_closed_with(const json& live, size_t clients, uint64_t records) {
  if (live["clients"].size() != clients) return false;
  for (const json& c : live["clients"]) {
    if (c["open"].get<bool>() || c["received"].get<uint64_t>() != records) return false;
  }
  return true;
}

TEST(ServeLive, ClientsCountsAndTracesAfterTheCursor) {
  collect::Encoder stream;
  ASSERT_TRUE(format::read_log(bookstore_log(), stream).ok);
  store::MemoryStore reference(bookstore_log());
  const uint64_t traces_per_client =
      reference.info().traces + reference.info().invalid_traces;  // rows each client adds
  ASSERT_GT(traces_per_client, 500u);  // so a page of 500 is a real bound below

  format::test::TempDir dir("sonde-serve-live");
  LiveCollector collector(dir.path());
  ASSERT_EQ(collector.open_error(), "");
  ASSERT_TRUE(is_collector_dir(dir.path()));
  std::string error;
  auto store = store::SqliteStore::open(dir.path(), &error);
  ASSERT_NE(store, nullptr) << error;
  ServeOptions o;
  o.port = 0;
  o.collector_dir = dir.path();
  RunningServer server(*store, o);

  json live = live_json(server.port());
  EXPECT_EQ(live["clients"].size(), 0u);
  EXPECT_EQ(live["new_traces"], 0);
  EXPECT_EQ(live["cursor"], 0);
  EXPECT_EQ(live["index_error"], "");
  EXPECT_EQ(live["reduce"], false);
  EXPECT_EQ(live["queued_connections"], 0);
  EXPECT_EQ(live["unserved_connections"], 0);

  // One client: its counts, and every trace it produced is new after 0.
  send_from_clients(collector.port(), stream.bytes, 1);
  live = live_until(server.port(),
                    [&](const json& l) { return all_closed_with(l, 1, stream.records); });
  const json first = live["clients"][0];  // a copy: `live` is reassigned below
  EXPECT_EQ(first["stored"].get<uint64_t>(), stream.records);
  EXPECT_EQ(first["rejected"], 0);
  EXPECT_EQ(first["traces"].get<uint64_t>() + first["invalid_traces"].get<uint64_t>(),
            traces_per_client);
  EXPECT_EQ(live["totals"]["received"].get<uint64_t>(), stream.records);
  live = live_json(server.port(), "?after=0");
  EXPECT_EQ(live["new_traces"].get<uint64_t>(), traces_per_client);
  ASSERT_EQ(live["traces"].size(), 50u);  // the default page
  for (const json& t : live["traces"]) EXPECT_EQ(t["client"], first["id"]);
  const int64_t cursor = live["cursor"].get<int64_t>();
  EXPECT_EQ(live_json(server.port(), "?after=" + std::to_string(cursor))["new_traces"], 0);

  // Two more clients at once: exactly their traces follow the cursor.
  send_from_clients(collector.port(), stream.bytes, 2);
  live_until(server.port(), [&](const json& l) { return all_closed_with(l, 3, stream.records); });
  live = live_json(server.port(), "?after=" + std::to_string(cursor) + "&limit=500");
  EXPECT_EQ(live["totals"]["received"].get<uint64_t>(), 3 * stream.records);
  EXPECT_EQ(live["new_traces"].get<uint64_t>(), 2 * traces_per_client);
  ASSERT_EQ(live["traces"].size(), 500u);
  std::set<int64_t> new_clients;
  for (const json& c : live["clients"]) {
    if (c["id"] != first["id"]) new_clients.insert(c["id"].get<int64_t>());
  }
  ASSERT_EQ(new_clients.size(), 2u);
  for (const json& t : live["traces"])
    EXPECT_TRUE(new_clients.contains(t["client"].get<int64_t>()));
  // Newest first: the first entry is the one stored last (the only one after next - 1).
  const int64_t next = live["cursor"].get<int64_t>();
  EXPECT_GT(next, cursor);
  const json last = live_json(server.port(), "?after=" + std::to_string(next - 1));
  EXPECT_EQ(last["new_traces"], 1);
  ASSERT_EQ(last["traces"].size(), 1u);
  EXPECT_EQ(last["traces"][0], live["traces"][0]);
  EXPECT_EQ(live_json(server.port(), "?after=" + std::to_string(next))["new_traces"], 0);
  const json all = live_json(server.port(), "?after=0&limit=0");
  EXPECT_EQ(all["new_traces"].get<uint64_t>(), 3 * traces_per_client);
  EXPECT_EQ(all["traces"].size(), 0u);
  EXPECT_EQ(all["cursor"], next);
  // A listed trace opens through the trace endpoint (the stream's links).
  const std::string id = live["traces"][0]["trace_id"].get<std::string>();
  EXPECT_EQ(http_get(server.port(), "/api/traces/" + id).status, 200);
}

// With --reduce, valid traces are stored merged by shape: the stream after
// the cursor holds only the traces stored one by one, the invalid ones.
TEST(ServeLive, ReducingCollectorStreamsOnlyTheInvalidTraces) {
  collect::Encoder stream;
  ASSERT_TRUE(format::read_log(bookstore_log(), stream).ok);
  store::MemoryStore reference(bookstore_log());
  format::test::TempDir dir("sonde-serve-live");
  LiveCollector collector(dir.path(), true);
  ASSERT_EQ(collector.open_error(), "");
  std::string error;
  auto store = store::SqliteStore::open(dir.path(), &error);
  ASSERT_NE(store, nullptr) << error;
  ServeOptions o;
  o.port = 0;
  o.collector_dir = dir.path();
  RunningServer server(*store, o);
  send_from_clients(collector.port(), stream.bytes, 1);
  const json live = live_until(
      server.port(), [&](const json& l) { return all_closed_with(l, 1, stream.records); });
  EXPECT_EQ(live["reduce"], true);
  const json& c = live["clients"][0];
  EXPECT_EQ(c["traces"].get<uint64_t>(), reference.info().traces);
  EXPECT_GT(c["reduced_traces"].get<uint64_t>(), 0u);
  EXPECT_LT(c["reduced_traces"].get<uint64_t>(), reference.info().traces);
  EXPECT_EQ(live["totals"]["reduced_traces"], c["reduced_traces"]);
  EXPECT_EQ(live["new_traces"].get<uint64_t>(), reference.info().invalid_traces);
}

TEST(ServeLive, BadParametersAreRefusedByName) {
  format::test::TempDir dir("sonde-serve-live");
  LiveCollector collector(dir.path());
  ASSERT_EQ(collector.open_error(), "");
  std::string error;
  auto store = store::SqliteStore::open(dir.path(), &error);
  ASSERT_NE(store, nullptr) << error;
  ServeOptions o;
  o.port = 0;
  o.collector_dir = dir.path();
  RunningServer server(*store, o);
  const std::pair<const char*, const char*> bad[] = {{"?after=abc", "after"},
                                                     {"?after=-1", "after"},
                                                     {"?after=1.5", "after"},
                                                     {"?after=1&after=2", "after"},
                                                     {"?after=", "after"},
                                                     {"?limit=501", "limit"},
                                                     {"?limit=x", "limit"},
                                                     {"?since=3", "since"},
                                                     {"?after=99999999999999999999", "after"}};
  for (const auto& [query, parameter] : bad) {
    const HttpReply r = http_get(server.port(), std::string("/api/live") + query);
    EXPECT_EQ(r.status, 400) << query;
    const json body = json::parse(r.body);
    EXPECT_EQ(body["parameter"], parameter) << query;
    EXPECT_NE(body["error"].get<std::string>().find(parameter), std::string::npos) << body;
  }
}

TEST(ServeLive, NotACollectorDirectoryAnswers404) {
  EXPECT_FALSE(is_collector_dir(bookstore_log()));
  store::MemoryStore store(bookstore_log());
  ServeOptions o;
  o.port = 0;
  RunningServer server(store, o);
  const HttpReply r = http_get(server.port(), "/api/live");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find("not a collector's directory"),
            std::string::npos)
      << r.body;
}

}  // namespace
}  // namespace sonde::serve::test
