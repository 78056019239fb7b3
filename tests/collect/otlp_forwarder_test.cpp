// The OTLP/HTTP forwarder against a receiver started here on loopback (a
// real HTTP server, cpp-httplib) that decodes every request's protobuf:
// span names, parent links, times and counts; batching; retries only on
// 429/502/503/504; 400 never retried; an unreachable receiver and a full
// queue counted, never silent.
#include "collect/otlp_forwarder.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../format/format_test_support.hpp"
#include "collector_test_support.hpp"
#include "protobuf_test_decode.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;
using std::chrono::milliseconds;
using test::proto_all;
using test::proto_decode;
using test::proto_first;

struct ReceivedSpan {
  std::string trace_id, span_id, parent_span_id, name, host;
  uint64_t start = 0, end = 0;
  int kind = 0;
  bool error = false;
};

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out += kHex[static_cast<uint8_t>(c) >> 4];
    out += kHex[static_cast<uint8_t>(c) & 0xF];
  }
  return out;
}

// An OTLP/HTTP receiver: answers each request with the next status of
// `statuses` (200 once they are used up) and keeps the spans of the
// requests it accepted.
class OtlpReceiver {
 public:
  explicit OtlpReceiver(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    server_.Post("/v1/traces", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      ++requests_;
      content_types_.insert(req.get_header_value("Content-Type"));
      const int status = next_ < statuses_.size() ? statuses_[next_++] : 200;
      res.status = status;
      if (status == 200) decode(req.body);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() does nothing before the server runs (cpp-httplib 0.11).
    while (!server_.is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  ~OtlpReceiver() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<ReceivedSpan> spans() {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }
  size_t requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::set<std::string> content_types() {
    std::lock_guard<std::mutex> lock(mu_);
    return content_types_;
  }

 private:
  void decode(std::string_view body) {
    for (const auto& rs : proto_all(proto_decode(body), 1)) {
      const auto resource_spans = proto_decode(rs.bytes);
      std::string host;
      if (const auto* resource = proto_first(resource_spans, 1)) {
        for (const auto& kv : proto_all(proto_decode(resource->bytes), 1)) {
          const auto pair = proto_decode(kv.bytes);
          const auto value = proto_decode(proto_first(pair, 2)->bytes);
          if (proto_first(pair, 1)->bytes == "host.name") host = proto_first(value, 1)->bytes;
        }
      }
      for (const auto& ss : proto_all(resource_spans, 2)) {
        for (const auto& sp : proto_all(proto_decode(ss.bytes), 2)) {
          const auto f = proto_decode(sp.bytes);
          ReceivedSpan s;
          s.trace_id = hex(proto_first(f, 1)->bytes);
          s.span_id = hex(proto_first(f, 2)->bytes);
          if (const auto* p = proto_first(f, 4)) s.parent_span_id = hex(p->bytes);
          s.name = proto_first(f, 5)->bytes;
          s.kind = static_cast<int>(proto_first(f, 6)->value);
          s.start = proto_first(f, 7)->value;
          s.end = proto_first(f, 8)->value;
          s.error = proto_first(f, 15) != nullptr;
          s.host = host;
          spans_.push_back(s);
        }
      }
    }
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<int> statuses_;
  size_t next_ = 0;
  size_t requests_ = 0;
  std::set<std::string> content_types_;
  std::vector<ReceivedSpan> spans_;
};

analysis::Execution exec(std::string_view op, int64_t tin, int64_t tout, int32_t eoi, int32_t ess) {
  analysis::Execution e;
  e.operation = op;
  e.component = "a.Shop";
  e.host = "srv";
  e.tin = tin;
  e.tout = tout;
  e.eoi = eoi;
  e.ess = ess;
  return e;
}

constexpr int64_t kT0 = 1'700'000'000'000'000'000;

// handle[0,10ms] { query[1ms,9ms] { row[2ms,3ms] } }
analysis::Trace request_trace(int64_t id) {
  analysis::Trace t;
  t.trace_id = id;
  t.parent_trace_id = id;
  t.thread_id = 1;
  t.host = "srv";
  t.executions = {exec("void a.Shop.handle()", kT0, kT0 + 10'000'000, 0, 0),
                  exec("void a.Shop.query()", kT0 + 1'000'000, kT0 + 9'000'000, 1, 1),
                  exec("void a.Shop.row()", kT0 + 2'000'000, kT0 + 3'000'000, 2, 2)};
  return t;
}

OtlpForwardOptions fast_options(int port) {
  OtlpForwardOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.schedule_delay = milliseconds(50);
  o.initial_backoff = milliseconds(20);
  o.max_backoff = milliseconds(50);
  o.timeout = milliseconds(2000);
  return o;
}

TEST(OtlpForwarder, RootSpansArriveWithTheirTimesAndIds) {
  OtlpReceiver receiver;
  OtlpForwarder forwarder(fast_options(receiver.port()));
  for (int64_t id = 1; id <= 3; ++id) forwarder.on_trace(request_trace(id));
  forwarder.shutdown(milliseconds(5000));
  const auto spans = receiver.spans();
  ASSERT_EQ(spans.size(), 3u);  // request-level: the roots only
  std::set<std::string> trace_ids;
  for (const ReceivedSpan& s : spans) {
    EXPECT_EQ(s.name, "Shop.handle()");
    EXPECT_EQ(s.start, static_cast<uint64_t>(kT0));
    EXPECT_EQ(s.end, static_cast<uint64_t>(kT0 + 10'000'000));
    EXPECT_EQ(s.parent_span_id, "");
    EXPECT_EQ(s.span_id, "0000000000000001");  // eoi 0 + 1
    EXPECT_EQ(s.host, "srv");
    trace_ids.insert(s.trace_id);
  }
  EXPECT_EQ(trace_ids, (std::set<std::string>{"00000000000000000000000000000001",
                                              "00000000000000000000000000000002",
                                              "00000000000000000000000000000003"}));
  EXPECT_EQ(receiver.content_types(), (std::set<std::string>{"application/x-protobuf"}));
  const OtlpForwardStats stats = forwarder.stats();
  EXPECT_EQ(stats.spans_queued, 3u);
  EXPECT_EQ(stats.spans_exported, 3u);
  EXPECT_EQ(stats.pending(), 0u);
  EXPECT_EQ(stats.last_error, "");
}

// With a threshold, longer executions come too, hung from their nearest
// exported ancestor (row is not exported; none hangs from it).
TEST(OtlpForwarder, LongExecutionsComeWithTheirNearestExportedParent) {
  OtlpReceiver receiver;
  OtlpForwardOptions o = fast_options(receiver.port());
  o.spans.min_duration_ns = 5'000'000;
  OtlpForwarder forwarder(o);
  forwarder.on_trace(request_trace(7));
  forwarder.shutdown(milliseconds(5000));
  std::map<std::string, ReceivedSpan> by_name;
  for (const ReceivedSpan& s : receiver.spans()) by_name[s.name] = s;
  ASSERT_EQ(by_name.size(), 2u);
  ASSERT_TRUE(by_name.count("Shop.query()"));
  EXPECT_EQ(by_name["Shop.query()"].parent_span_id, by_name["Shop.handle()"].span_id);
  EXPECT_EQ(by_name["Shop.query()"].trace_id, by_name["Shop.handle()"].trace_id);
}

TEST(OtlpForwarder, BatchesHoldAtMostTheBatchSize) {
  OtlpReceiver receiver;
  OtlpForwardOptions o = fast_options(receiver.port());
  o.max_batch_spans = 4;
  OtlpForwarder forwarder(o);
  for (int64_t id = 1; id <= 10; ++id) forwarder.on_trace(request_trace(id));
  forwarder.shutdown(milliseconds(5000));
  EXPECT_EQ(receiver.spans().size(), 10u);
  EXPECT_GE(receiver.requests(), 3u);  // 10 spans in batches of at most 4
  EXPECT_EQ(forwarder.stats().spans_exported, 10u);
}

TEST(OtlpForwarder, RetriesOnlyTheRetryableStatuses) {
  OtlpReceiver receiver({503, 429, 200});
  OtlpForwarder forwarder(fast_options(receiver.port()));
  forwarder.on_trace(request_trace(1));
  forwarder.shutdown(milliseconds(5000));
  EXPECT_EQ(receiver.requests(), 3u);
  EXPECT_EQ(receiver.spans().size(), 1u);
  const OtlpForwardStats stats = forwarder.stats();
  EXPECT_EQ(stats.retries, 2u);
  EXPECT_EQ(stats.spans_exported, 1u);
}

TEST(OtlpForwarder, ABadRequestIsNeverRetriedAndCountsAsRejected) {
  OtlpReceiver receiver({400});
  OtlpForwarder forwarder(fast_options(receiver.port()));
  forwarder.on_trace(request_trace(1));
  forwarder.on_trace(request_trace(2));
  forwarder.shutdown(milliseconds(5000));
  EXPECT_EQ(receiver.requests(), 1u);
  const OtlpForwardStats stats = forwarder.stats();
  EXPECT_EQ(stats.spans_rejected, 2u);
  EXPECT_EQ(stats.retries, 0u);
  EXPECT_NE(stats.last_error.find("status 400"), std::string::npos) << stats.last_error;
}

TEST(OtlpForwarder, AnUnreachableReceiverFailsTheSpansAfterTheRetriesAndSaysSo) {
  // A port bound but not listening: connections to it are refused, and no
  // parallel test's server can take it meanwhile.
  const int reserved = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(reserved, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::getsockname(reserved, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  OtlpForwardOptions o = fast_options(port);
  o.max_attempts = 3;
  OtlpForwarder forwarder(o);
  forwarder.on_trace(request_trace(1));
  forwarder.shutdown(milliseconds(5000));
  const OtlpForwardStats stats = forwarder.stats();
  EXPECT_EQ(stats.spans_failed, 1u);
  EXPECT_EQ(stats.requests, 3u);
  EXPECT_NE(
      stats.last_error.find("cannot reach the OTLP receiver 127.0.0.1:" + std::to_string(port)),
      std::string::npos)
      << stats.last_error;
  EXPECT_NE(stats.last_error.find("gave up after 3 attempts"), std::string::npos);
  ::close(reserved);
}

TEST(OtlpForwarder, AFullQueueDropsAndCountsWhatDoesNotFit) {
  OtlpReceiver receiver;
  OtlpForwardOptions o = fast_options(receiver.port());
  o.max_queue_spans = 5;
  o.max_batch_spans = 100;  // nothing leaves before the delay
  o.schedule_delay = milliseconds(60'000);
  OtlpForwarder forwarder(o);
  for (int64_t id = 1; id <= 8; ++id) forwarder.on_trace(request_trace(id));
  EXPECT_EQ(forwarder.stats().spans_dropped, 3u);
  forwarder.shutdown(milliseconds(5000));  // sends the 5 queued
  const OtlpForwardStats stats = forwarder.stats();
  EXPECT_EQ(stats.spans_exported, 5u);
  EXPECT_EQ(receiver.spans().size(), 5u);
  EXPECT_EQ(stats.spans_queued + stats.spans_dropped, 8u);
}

// The collector forwards the root span of every valid trace its monitored
// processes send (sonde's native stream and Kieker's TCP protocol alike).
TEST(OtlpForwarder, TheCollectorForwardsARootSpanPerValidTrace) {
  OtlpReceiver receiver;
  TempDir dir("sonde-forward");
  RunningCollector running(dir.path(), 2, milliseconds(500), 10'000, fast_options(receiver.port()));
  ASSERT_EQ(running.open_error(), "");
  expect_clean_exits(spawn_workloads(running.port(), 2, 2, 50, 3, "mixed"));
  ASSERT_EQ(running.join(), "");
  uint64_t traces = 0;
  for (const ClientReport& c : running.collector().clients()) {
    EXPECT_EQ(c.invalid_traces, 0u);
    traces += c.traces;
  }
  ASSERT_GT(traces, 0u);
  const OtlpForwardStats stats = running.collector().forward_stats();
  EXPECT_EQ(stats.spans_queued, traces);
  EXPECT_EQ(stats.spans_exported, traces);
  EXPECT_EQ(stats.spans_dropped + stats.spans_failed + stats.spans_rejected, 0u);
  const auto spans = receiver.spans();
  EXPECT_EQ(spans.size(), traces);
  for (const ReceivedSpan& s : spans) {
    EXPECT_EQ(s.parent_span_id, "") << s.name;
    EXPECT_LE(s.start, s.end) << s.name;
  }
}

TEST(OtlpForwarder, TargetsAreParsedOrNamedInTheError) {
  OtlpForwardOptions o;
  EXPECT_EQ(parse_otlp_target("otlp://collector.local:4318", o), "");
  EXPECT_EQ(o.host, "collector.local");
  EXPECT_EQ(o.port, 4318);
  EXPECT_EQ(o.path, "/v1/traces");
  EXPECT_EQ(parse_otlp_target("otlp://127.0.0.1:9000/custom/traces", o), "");
  EXPECT_EQ(o.port, 9000);
  EXPECT_EQ(o.path, "/custom/traces");
  EXPECT_EQ(parse_otlp_target("otlp://example", o), "");
  EXPECT_EQ(o.port, 4318);
  EXPECT_NE(parse_otlp_target("http://x:1", o).find("'http://x:1'"), std::string::npos);
  EXPECT_NE(parse_otlp_target("otlp://x:99999", o).find("bad port"), std::string::npos);
  EXPECT_NE(parse_otlp_target("otlp://:4318", o).find("no host"), std::string::npos);
}

}  // namespace
}  // namespace sonde::collect
