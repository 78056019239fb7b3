// The collector in-process on a free loopback port, fed by real TCP
// clients: monitored workload processes (sonde's tcp writer) and
// hand-driven Kieker TCP streams of the bookstore log. Counts come from the
// workload's arguments and the encoded logs; the SQLite store written by
// the collector is read back through SqliteStore.
// Over 500 lines: the collector's end-to-end cases, on the setup in
// collector_test_support.hpp; the native stream's, the workers', the
// reduction's and ClickHouse's cases have files of their own.
#include "collect/collector.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "../format/format_test_support.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "collector_test_support.hpp"
#include "format/kieker_tcp.hpp"
#include "format/log_reader.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::collect {
namespace {

namespace fs = std::filesystem;
using format::test::TempDir;
using format::test::testdata;

const std::string kBookstore = testdata("kieker/bookstore-oer-2010/log");

TEST(Collector, ConcurrentMonitoredProcessesArriveCompleteAndIndexed) {
  TempDir dir("sonde-collect");
  const int processes = 4, threads = 2, iterations = 300, depth = 3;
  RunningCollector running(dir.path(), processes);
  ASSERT_EQ(running.open_error(), "");

  // Two processes stream sonde's native protocol, two Kieker's.
  expect_clean_exits(
      spawn_workloads(running.port(), processes, threads, iterations, depth, "mixed"));
  ASSERT_EQ(running.join(), "");

  // Per process (workload.cpp): 2 traces per iteration and thread plus one
  // failing call per thread; every call is a before and an after event;
  // one KiekerMetadataRecord describes the process.
  const uint64_t traces = uint64_t{threads} * (2 * iterations + 1);
  const uint64_t calls = uint64_t{threads} * iterations * (depth + 2) + threads;
  const uint64_t records = traces + 2 * calls + 1;
  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), static_cast<size_t>(processes));
  std::map<std::string, int> protocols;
  for (const ClientReport& c : clients) ++protocols[c.protocol];
  EXPECT_EQ(protocols, (std::map<std::string, int>{{"kieker", 2}, {"native", 2}}));
  for (const ClientReport& c : clients) {
    SCOPED_TRACE(c.record.peer);
    EXPECT_EQ(c.duplicate_chunks, 0u);
    EXPECT_EQ(c.record.received, records);
    EXPECT_EQ(c.record.stored, records);
    EXPECT_EQ(c.record.rejected, 0u);
    EXPECT_EQ(c.record.error, "");
    EXPECT_EQ(c.traces, traces);
    EXPECT_EQ(c.invalid_traces, 0u);
    EXPECT_FALSE(c.open);
  }

  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  const store::StoreInfo info = store->info();
  EXPECT_EQ(info.traces, processes * traces);
  EXPECT_EQ(info.invalid_traces, 0u);
  EXPECT_EQ(info.executions, processes * calls);

  // A native stream names a scope as the program did ("shop.recurse"); the
  // Kieker tcp writer sends Kieker's signature, where a scope gets "()".
  std::map<std::string, store::OperationStats> ops;
  for (const auto& o : store->operations()) ops[o.operation] = o;
  const uint64_t runs = uint64_t{processes / 2} * threads * iterations;
  ASSERT_EQ(ops.size(), 6u);
  for (const std::string suffix : {"", "()"}) {
    SCOPED_TRACE("operations named like shop.recurse" + suffix);
    EXPECT_EQ(ops["shop.recurse" + suffix].count, runs * (depth + 1));
    EXPECT_EQ(ops["shop.leaf" + suffix].count, runs);
    EXPECT_EQ(ops["shop.fail" + suffix].count, uint64_t{processes / 2} * threads);
    EXPECT_EQ(ops["shop.fail" + suffix].failed, uint64_t{processes / 2} * threads);
    EXPECT_EQ(ops["shop.recurse" + suffix].failed, 0u);
  }

  std::map<std::pair<std::string, std::string>, uint64_t> edges;
  for (const auto& e : store->call_edges()) edges[{e.caller, e.callee}] = e.calls;
  std::map<std::pair<std::string, std::string>, uint64_t> want_edges;
  for (const std::string suffix : {"", "()"}) {
    want_edges[{"", "shop.recurse" + suffix}] = runs;
    want_edges[{"shop.recurse" + suffix, "shop.recurse" + suffix}] = runs * depth;
    want_edges[{"", "shop.leaf" + suffix}] = runs;
    want_edges[{"", "shop.fail" + suffix}] = uint64_t{processes / 2} * threads;
  }
  EXPECT_EQ(edges, want_edges);

  store::TraceQuery failed;
  failed.filter.only_failed = true;
  const store::TraceQueryResult f = store->find_traces(failed);
  EXPECT_EQ(f.matched, uint64_t{processes} * threads);
  for (const auto& e : f.entries) EXPECT_TRUE(e.root_operation.rfind("shop.fail", 0) == 0);
  ASSERT_FALSE(f.entries.empty());
  const auto shown = store->trace(f.entries[0].trace_id);
  ASSERT_GE(shown.size(), 1u);
  ASSERT_EQ(shown[0].executions.size(), 1u);
  EXPECT_TRUE(shown[0].executions[0].failed);
  EXPECT_NE(shown[0].executions[0].cause.find("out of stock"), std::string::npos);

  store::TraceQuery deep;
  deep.filter.operation = "recurse";
  EXPECT_EQ(store->find_traces(deep).matched, 2 * runs);  // both names of the operation

  // The log directory holds every record, readable as one native log.
  Encoder count;
  const format::LogReadStats read = format::read_log(dir / "log", count);
  EXPECT_TRUE(read.ok);
  EXPECT_EQ(count.records, processes * records);
  // The stats file says the same.
  std::ifstream in(dir / "collect-stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in);
  EXPECT_EQ(stats["received"].get<uint64_t>(), processes * records);
  EXPECT_EQ(stats["stored"].get<uint64_t>(), processes * records);
  EXPECT_EQ(stats["rejected"].get<uint64_t>(), 0u);
  EXPECT_EQ(stats["clients"].size(), static_cast<size_t>(processes));
}

TEST(Collector, SameTraceIdsFromManyClientsStaySeparate) {
  // Six clients send the same log at once: their trace ids clash, and each
  // connection's reconstructor keeps its traces apart.
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  TempDir dir("sonde-collect");
  const int clients = 6;
  RunningCollector running(dir.path(), clients);
  ASSERT_EQ(running.open_error(), "");
  std::vector<std::thread> senders;
  for (int i = 0; i < clients; ++i) {
    senders.emplace_back([&, i] {
      const int fd = connect_to(running.port());
      // Odd piece sizes so frames are cut everywhere.
      const size_t piece = 1000 + 77 * static_cast<size_t>(i);
      for (size_t at = 0; at < bookstore.bytes.size(); at += piece) {
        EXPECT_TRUE(send_all(fd, std::string_view(bookstore.bytes).substr(at, piece)));
      }
      ::close(fd);
    });
  }
  for (auto& t : senders) t.join();
  ASSERT_EQ(running.join(), "");
  for (const ClientReport& c : running.collector().clients()) {
    EXPECT_EQ(c.record.received, bookstore.records);
    EXPECT_EQ(c.record.stored, bookstore.records);
    EXPECT_EQ(c.traces, 1635u);
  }
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, clients * 1635u);
  store::TraceQuery all;
  all.limit = 1;
  const auto first = store->find_traces(all);
  ASSERT_EQ(first.entries.size(), 1u);
  const auto same_id = store->trace(first.entries[0].trace_id);
  ASSERT_EQ(same_id.size(), static_cast<size_t>(clients));
  for (const auto& t : same_id) EXPECT_EQ(t.executions.size(), 4u);
  for (const auto& o : store->operations())
    EXPECT_EQ(o.count % (clients * 1635u), 0u) << o.operation;
}

TEST(Collector, KiekerRecordsAreLoggedWithTheChosenCodecAndReadBackWhole) {
  // The bookstore log over Kieker's protocol, once per codec of the client
  // log: every chunk carries that codec, every record reads back, and the
  // sizes order as the codecs compress (zstd < lz4 < none).
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  std::map<format::native::Codec, uintmax_t> log_sizes;
  for (const auto codec :
       {format::native::Codec::kLz4, format::native::Codec::kZstd, format::native::Codec::kNone}) {
    SCOPED_TRACE(static_cast<int>(codec));
    TempDir dir("sonde-collect-codec");
    CollectorOptions options = RunningCollector::options(dir.path(), 1);
    options.kieker_log_codec = codec;
    RunningCollector running(options);
    ASSERT_EQ(running.open_error(), "");
    EXPECT_TRUE(send_and_close(running.port(), bookstore.bytes));
    ASSERT_EQ(running.join(), "");
    const auto clients = running.collector().clients();
    ASSERT_EQ(clients.size(), 1u);
    EXPECT_EQ(clients[0].record.stored, bookstore.records);
    EXPECT_EQ(clients[0].traces, 1635u);
    const std::string log = dir / clients[0].record.log_file;
    const std::vector<uint8_t> codecs = chunk_codecs(log);
    ASSERT_FALSE(codecs.empty()) << log << " is not whole chunks";
    EXPECT_EQ(std::set<uint8_t>(codecs.begin(), codecs.end()),
              std::set<uint8_t>{static_cast<uint8_t>(codec)});
    Encoder back;
    EXPECT_TRUE(format::read_log(log, back).ok);
    EXPECT_EQ(back.records, bookstore.records);
    EXPECT_EQ(back.bytes, bookstore.bytes);
    log_sizes[codec] = fs::file_size(log);
  }
  EXPECT_LT(log_sizes[format::native::Codec::kZstd], log_sizes[format::native::Codec::kLz4]);
  EXPECT_LT(log_sizes[format::native::Codec::kLz4], log_sizes[format::native::Codec::kNone]);
}

TEST(Collector, GarbageIsRejectedAndCountedOthersAreServed) {
  Encoder good;
  ASSERT_TRUE(format::read_log(kBookstore, good).ok);
  TempDir dir("sonde-collect");
  RunningCollector running(dir.path(), 3);
  ASSERT_EQ(running.open_error(), "");
  // A frame naming a string id that was never registered, then junk.
  const std::string garbage("\x00\x00\x00\x07garbage that is no frame at all", 35);
  const int bad = connect_to(running.port());
  ASSERT_TRUE(send_all(bad, garbage));
  // A valid stream cut off in the middle of a frame.
  const int cut = connect_to(running.port());
  ASSERT_TRUE(send_all(cut, std::string_view(good.bytes).substr(0, good.bytes.size() - 3)));
  const int fd = connect_to(running.port());
  ASSERT_TRUE(send_all(fd, good.bytes));
  ::close(bad);
  ::close(cut);
  ::close(fd);
  ASSERT_EQ(running.join(), "");

  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 3u);
  int broken = 0, complete = 0;
  for (const ClientReport& c : clients) {
    if (!c.record.error.empty()) {
      ++broken;
      EXPECT_GT(c.record.undecoded_bytes, 0u) << c.record.error;
      EXPECT_LT(c.record.received, good.records);
    } else {
      ++complete;
      EXPECT_EQ(c.record.received, good.records);
      EXPECT_EQ(c.traces, 1635u);
    }
  }
  EXPECT_EQ(broken, 2);
  EXPECT_EQ(complete, 1);
  std::ifstream in(dir / "collect-stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in);
  int with_error = 0;
  for (const auto& c : stats["clients"])
    with_error += c["error"].get<std::string>().empty() ? 0 : 1;
  EXPECT_EQ(with_error, 2);
  // The cut stream's complete records were kept; its traces (all but the
  // last, whose entry record was cut) are stored.
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_GE(store->info().traces, 1635u + 1634u);
}

// The stats file as the collector last wrote it (it writes a whole new
// file and renames it, so a read never sees half of one).
nlohmann::json read_stats(const TempDir& dir) {
  std::ifstream in(dir / "collect-stats.json");
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? nlohmann::json::object() : doc;
}

// Polls the stats file until `done` holds; false after 60 s.
bool wait_for_stats(const TempDir& dir, const std::function<bool(const nlohmann::json&)>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done(read_stats(dir))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(Collector, SixtyFourClientsAtOnceLoseNothing) {
  // 64 clients connect, each sends the whole bookstore stream in pieces of
  // its own size, and none closes before the collector has all 64 open:
  // 64 concurrent connections, 64 x 6,541 records, every one accounted for.
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  TempDir dir("sonde-collect");
  const int clients = 64;
  RunningCollector running(dir.path(), clients, std::chrono::milliseconds(50));
  ASSERT_EQ(running.open_error(), "");
  std::atomic<int> sent{0};
  std::atomic<bool> all_open{false};
  std::vector<std::thread> senders;
  for (int i = 0; i < clients; ++i) {
    senders.emplace_back([&, i] {
      // "Sent" then implies "accepted": the stream is far larger than 4 KiB.
      const int fd = connect_to(running.port(), 4096);
      const size_t piece = 997 + 131 * static_cast<size_t>(i);
      bool ok = true;
      for (size_t at = 0; ok && at < bookstore.bytes.size(); at += piece) {
        ok = send_all(fd, std::string_view(bookstore.bytes).substr(at, piece));
      }
      EXPECT_TRUE(ok) << "client " << i;
      ++sent;
      while (!all_open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ::close(fd);
    });
  }
  const bool opened = wait_for_stats(dir, [&](const nlohmann::json& s) {
    return sent.load() == clients && s.value("peak_open_clients", 0) == clients;
  });
  all_open = true;
  for (auto& t : senders) t.join();
  ASSERT_TRUE(opened) << read_stats(dir).dump(1);
  ASSERT_EQ(running.join(), "");

  EXPECT_EQ(running.collector().peak_open_clients(), static_cast<size_t>(clients));
  EXPECT_EQ(running.collector().unserved_connections(), 0u);
  const auto reports = running.collector().clients();
  ASSERT_EQ(reports.size(), static_cast<size_t>(clients));
  for (const ClientReport& c : reports) {
    SCOPED_TRACE(c.record.peer);
    EXPECT_EQ(c.record.received, bookstore.records);
    EXPECT_EQ(c.record.stored, bookstore.records);
    EXPECT_EQ(c.record.rejected, 0u);
    EXPECT_EQ(c.record.undecoded_bytes, 0u);
    EXPECT_EQ(c.record.error, "");
    EXPECT_EQ(c.traces, 1635u);
    EXPECT_EQ(c.invalid_traces, 0u);
  }
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, clients * 1635u);
  EXPECT_EQ(store->info().executions, clients * 1635u * 4);
  const nlohmann::json stats = read_stats(dir);
  EXPECT_EQ(stats["received"].get<uint64_t>(), clients * bookstore.records);
  EXPECT_EQ(stats["stored"].get<uint64_t>(), clients * bookstore.records);
  EXPECT_EQ(stats["clients"].size(), static_cast<size_t>(clients));
  EXPECT_EQ(stats["peak_open_clients"].get<int>(), clients);
  // Every record is in the logs, too.
  Encoder count;
  EXPECT_TRUE(format::read_log(dir / "log", count).ok);
  EXPECT_EQ(count.records, clients * bookstore.records);
}

// A long-running collector serving short-lived processes keeps only the
// last listed_closed_clients closed clients in memory (and in the stats
// file and clients()); the totals still count every client, and the store
// has every one.
TEST(Collector, ClosedClientsBeyondTheListedOnesAreCountedNotKept) {
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  TempDir dir("sonde-collect");
  const int clients = 5;
  CollectorOptions o;
  o.out = dir.path();
  o.listen.port = 0;
  o.listen.stop_after_connections = clients;
  o.commit_interval = std::chrono::milliseconds(50);
  o.listen.listed_closed_clients = 2;
  Collector collector(o);
  ASSERT_EQ(collector.open(), "");
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  for (int i = 0; i < clients; ++i) {
    const int fd = connect_to(collector.port());
    EXPECT_TRUE(send_all(fd, bookstore.bytes)) << "client " << i;
    ::close(fd);
  }
  serving.join();
  ASSERT_EQ(collector.finish(), "");

  const auto listed = collector.clients();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_LT(listed[0].record.id, listed[1].record.id);
  for (const ClientReport& c : listed) {
    EXPECT_FALSE(c.open);
    EXPECT_EQ(c.record.received, bookstore.records);
    EXPECT_EQ(c.protocol, "kieker");
  }
  const ClientTotals totals = collector.totals();
  EXPECT_EQ(totals.clients, static_cast<uint64_t>(clients));
  EXPECT_EQ(totals.received, clients * bookstore.records);
  EXPECT_EQ(totals.stored, clients * bookstore.records);
  EXPECT_EQ(totals.traces, clients * 1635u);
  const nlohmann::json stats = read_stats(dir);
  EXPECT_EQ(stats["clients"].size(), 2u);
  EXPECT_EQ(stats["clients_total"].get<uint64_t>(), static_cast<uint64_t>(clients));
  EXPECT_EQ(stats["clients_not_listed"].get<uint64_t>(), static_cast<uint64_t>(clients - 2));
  EXPECT_EQ(stats["received"].get<uint64_t>(), clients * bookstore.records);
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, clients * 1635u);
}

TEST(Collector, ClientsOverTheLimitWaitForASlotAndLoseNothing) {
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  TempDir dir("sonde-collect");
  CollectorOptions o;
  o.out = dir.path();
  o.listen.port = 0;
  o.listen.max_connections = 4;
  o.listen.stop_after_connections = 6;
  o.commit_interval = std::chrono::milliseconds(50);
  Collector collector(o);
  ASSERT_EQ(collector.open(), "");
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  // Four held open, then two more: those wait in the accept queue, their
  // first bytes already sent into the kernel.
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(connect_to(collector.port()));
  ASSERT_TRUE(wait_for_stats(dir, [](const nlohmann::json& s) {
    return s.contains("clients") && s["clients"].size() == 4;
  })) << read_stats(dir).dump(1);
  std::vector<int> waiting = {connect_to(collector.port()), connect_to(collector.port())};
  for (int fd : waiting) EXPECT_TRUE(send_all(fd, bookstore.bytes.substr(0, 1000)));
  const bool queued = wait_for_stats(
      dir, [](const nlohmann::json& s) { return s.value("queued_connections", 0) == 2; });
  EXPECT_EQ(read_stats(dir)["clients"].size(), 4u);
  for (int fd : held) {
    EXPECT_TRUE(send_all(fd, bookstore.bytes));
    ::close(fd);
  }
  // Slots free up: the waiting two are served and send the rest.
  for (int fd : waiting) {
    EXPECT_TRUE(send_all(fd, bookstore.bytes.substr(1000)));
    ::close(fd);
  }
  serving.join();
  ASSERT_TRUE(queued) << read_stats(dir).dump(1);
  ASSERT_EQ(collector.finish(), "");
  EXPECT_EQ(collector.unserved_connections(), 0u);
  EXPECT_EQ(collector.peak_open_clients(), 4u);
  const auto reports = collector.clients();
  ASSERT_EQ(reports.size(), 6u);
  for (const ClientReport& c : reports) EXPECT_EQ(c.record.stored, bookstore.records);
  const nlohmann::json stats = read_stats(dir);
  EXPECT_EQ(stats["queued_connections"].get<int>(), 0);
  EXPECT_EQ(stats["stored"].get<uint64_t>(), 6 * bookstore.records);
}

TEST(Collector, ConnectionsStillWaitingAtStopAreCountedWithTheirBytes) {
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  TempDir dir("sonde-collect");
  CollectorOptions o;
  o.out = dir.path();
  o.listen.port = 0;
  o.listen.max_connections = 1;
  o.listen.drain_timeout = std::chrono::milliseconds(200);
  o.commit_interval = std::chrono::milliseconds(50);
  Collector collector(o);
  ASSERT_EQ(collector.open(), "");
  std::atomic<bool> stop{false};
  std::thread serving([&] { collector.run(stop); });
  // The one slot is taken by a sender that never closes; the second waits.
  const int holder = connect_to(collector.port());
  ASSERT_TRUE(wait_for_stats(dir, [](const nlohmann::json& s) {
    return s.contains("clients") && s["clients"].size() == 1;
  })) << read_stats(dir).dump(1);
  const int waiter = connect_to(collector.port());
  const size_t unread = 5000;
  ASSERT_TRUE(send_all(waiter, bookstore.bytes.substr(0, unread)));
  ASSERT_TRUE(wait_for_stats(dir, [](const nlohmann::json& s) {
    return s.value("queued_connections", 0) == 1;
  })) << read_stats(dir).dump(1);
  stop = true;
  serving.join();
  ASSERT_EQ(collector.finish(), "");
  EXPECT_EQ(collector.unserved_connections(), 1u);
  EXPECT_EQ(collector.unserved_bytes(), unread);
  const nlohmann::json stats = read_stats(dir);
  EXPECT_EQ(stats["unserved_connections"].get<int>(), 1);
  EXPECT_EQ(stats["unserved_bytes"].get<size_t>(), unread);
  ASSERT_EQ(stats["clients"].size(), 1u);
  // The holder never closed: its cut is recorded, not silent.
  const std::string cut = stats["clients"][0]["error"];
  EXPECT_NE(cut.find("cut when the collector stopped"), std::string::npos) << cut;
  ::close(holder);
  ::close(waiter);
}

TEST(Collector, ReadersSeeCommittedTracesWhileTheCollectorRuns) {
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  TempDir dir("sonde-collect");
  RunningCollector running(dir.path(), 1, std::chrono::milliseconds(50));
  ASSERT_EQ(running.open_error(), "");
  const int fd = connect_to(running.port());
  ASSERT_TRUE(send_all(fd, bookstore.bytes));
  // The connection stays open; the collector commits on its own.
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  const uint64_t generation = store->info().generation;
  uint64_t seen = 0;
  for (int i = 0; i < 1000 && seen < 1635; ++i) {
    seen = store->info().traces;
    if (seen < 1635) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(seen, 1635u);
  EXPECT_GT(store->info().generation, generation);
  ::close(fd);
  ASSERT_EQ(running.join(), "");
  EXPECT_EQ(store->info().traces, 1635u);
}

// Bounded memory: with one open trace allowed per connection, traces that
// overlap in the stream are closed early and stored as invalid with their
// reason, exactly as the reconstructor does on the log with the same bound;
// none disappears.
class Counter : public analysis::TraceSink {
 public:
  void on_trace(const analysis::Trace&) override { ++valid; }
  void on_invalid_trace(const analysis::InvalidTrace&) override { ++invalid; }
  uint64_t valid = 0, invalid = 0;
};

TEST(Collector, BoundedOpenTracesStoreEvictedTracesAsInvalid) {
  Encoder bookstore;
  ASSERT_TRUE(format::read_log(kBookstore, bookstore).ok);
  Counter reference;
  analysis::ReconstructionOptions bounded;
  bounded.max_open_traces = 1;
  bounded.trace_timeout_ns = CollectorOptions{}.trace_timeout_ns;
  analysis::TraceReconstructor r(reference, bounded);
  ASSERT_TRUE(format::read_log(kBookstore, r).ok);
  r.finish();
  ASSERT_GT(reference.invalid, 0u);  // the bookstore's traces do overlap

  TempDir dir("sonde-collect");
  RunningCollector running(dir.path(), 1, std::chrono::milliseconds(500), 1);
  ASSERT_EQ(running.open_error(), "");
  ASSERT_TRUE(send_and_close(running.port(), bookstore.bytes));
  ASSERT_EQ(running.join(), "");
  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].record.received, bookstore.records);
  EXPECT_EQ(clients[0].traces, reference.valid);
  EXPECT_EQ(clients[0].invalid_traces, reference.invalid);
  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, reference.valid);
  EXPECT_EQ(store->info().invalid_traces, reference.invalid);
  store::TraceQuery invalid;
  invalid.filter.only_invalid = true;
  invalid.limit = 5;
  for (const auto& e : store->find_traces(invalid).entries) EXPECT_NE(e.problem, "") << e.trace_id;
}

TEST(Collector, UnwritableStoreIsNamed) {
  TempDir dir("sonde-collect");
  { std::ofstream(dir / "file") << "x"; }
  CollectorOptions o;
  o.out = dir / "file/store";
  o.listen.port = 0;
  Collector c(o);
  const std::string error = c.open();
  EXPECT_NE(error.find(dir / "file/store"), std::string::npos) << error;
  EXPECT_NE(error.find("Not a directory"), std::string::npos) << error;
}

}  // namespace
}  // namespace sonde::collect
