// The JSON API of `sonde serve` over real TCP on loopback, on the Kieker
// bookstore log. Expected values come from the fixture (1635 traces, README)
// and from the analysis code `sonde traces` and `sonde summary` run on the
// same log (TraceCatalog, analyze_log), never from the server itself.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/reconstruct/trace_catalog.hpp"
#include "http_get.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"

namespace sonde::serve::test {
namespace {

using nlohmann::json;

constexpr uint64_t kBookstoreTraces = 1635;  // testdata/kieker/README.md

// What `sonde traces` lists for this filter/order/limit on the bookstore log.
std::pair<std::vector<analysis::TraceEntry>, uint64_t> catalog(analysis::TraceFilter filter,
                                                               analysis::TraceOrder order,
                                                               size_t limit) {
  analysis::AnalysisOptions options;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  analysis::TraceAnalysis analysis(options);
  analysis::TraceCatalog cat(std::move(filter), order, limit);
  analysis.add_sink(cat);
  format::read_log(bookstore_log(), analysis.records());
  analysis.finish();
  return {cat.entries(), cat.matched()};
}

class ServeApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { store_ = new store::MemoryStore(bookstore_log()); }
  static void TearDownTestSuite() {
    delete store_;
    store_ = nullptr;
  }
  void SetUp() override {
    ServeOptions o;
    o.port = 0;
    server_ = std::make_unique<RunningServer>(*store_, o);
  }
  json get_json(const std::string& target, int expect_status = 200) {
    const HttpReply r = http_get(server_->port(), target);
    EXPECT_EQ(r.status, expect_status) << target << ": " << r.body;
    EXPECT_EQ(r.header("content-type"), "application/json") << target;
    return json::parse(r.body);
  }
  static void expect_same(const json& got, const analysis::TraceEntry& want) {
    EXPECT_EQ(got.at("trace_id"), std::to_string(want.trace_id));
    EXPECT_EQ(got.at("root_operation"), want.root_operation);
    EXPECT_EQ(got.at("host"), want.host);
    EXPECT_EQ(got.at("start_ns"), want.start);
    EXPECT_EQ(got.at("duration_ns"), want.duration);
    EXPECT_EQ(got.at("executions"), want.executions);
    EXPECT_EQ(got.at("failed_executions"), want.failed);
    EXPECT_EQ(got.at("valid"), want.valid);
  }

  static store::MemoryStore* store_;
  std::unique_ptr<RunningServer> server_;
};
store::MemoryStore* ServeApiTest::store_ = nullptr;

TEST_F(ServeApiTest, InfoCountsWhatTheLogHolds) {
  const analysis::AnalysisResult summary = analysis::analyze_log(bookstore_log());
  const json info = get_json("/api/info");
  EXPECT_EQ(info["traces"], kBookstoreTraces);
  EXPECT_EQ(info["traces"], summary.traces.valid);
  EXPECT_EQ(info["invalid_traces"], summary.traces.invalid);
  EXPECT_EQ(info["executions"], summary.traces.executions);
  EXPECT_EQ(info["generation"], 0);
  EXPECT_EQ(info["hosts"], json::array({"SRV0"}));  // every trace enters on SRV0
  EXPECT_LE(info["first_start_ns"].get<int64_t>(), info["last_start_ns"].get<int64_t>());
}

TEST_F(ServeApiTest, DefaultListIsTheCatalogueEarliestFirst) {
  const auto [want, matched] = catalog({}, analysis::TraceOrder::kStart, 100);
  const json got = get_json("/api/traces");
  EXPECT_EQ(got["matched"], matched);
  EXPECT_EQ(got["matched"], kBookstoreTraces);
  ASSERT_EQ(got["traces"].size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) expect_same(got["traces"][i], want[i]);
}

TEST_F(ServeApiTest, FilteredListMatchesTheCatalogue) {
  analysis::TraceFilter filter;
  filter.operation = "searchBook";
  filter.min_duration = 5'000'000;
  filter.max_duration = 200'000'000;
  const auto [want, matched] = catalog(filter, analysis::TraceOrder::kLongest, 25);
  const json got = get_json(
      "/api/traces?operation=searchBook&min_ns=5000000&max_ns=200000000&order=duration&limit=25");
  ASSERT_GT(matched, 25u);  // the filter keeps some traces and drops others
  ASSERT_LT(matched, kBookstoreTraces);
  EXPECT_EQ(got["matched"], matched);
  ASSERT_EQ(got["traces"].size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) expect_same(got["traces"][i], want[i]);
  // No root operation matches this, so nothing is listed.
  EXPECT_EQ(get_json("/api/traces?operation=getOffers")["matched"], 0);
  EXPECT_EQ(get_json("/api/traces?host=SRV1")["matched"], 0);
  EXPECT_EQ(get_json("/api/traces?host=SRV0")["matched"], kBookstoreTraces);
  EXPECT_EQ(get_json("/api/traces?failed=true")["matched"], 0);
  // A log's store counts every match; asking for exactness changes nothing.
  EXPECT_EQ(got["matched_estimated"], false);
  const json exact = get_json(
      "/api/traces?operation=searchBook&min_ns=5000000&max_ns=200000000&order=duration&limit=25"
      "&exact=true");
  EXPECT_EQ(exact["matched"], matched);
  EXPECT_EQ(exact["matched_estimated"], false);
}

TEST_F(ServeApiTest, PagesCoverEveryTraceOnce) {
  std::set<std::string> seen;
  for (size_t offset = 0; offset < kBookstoreTraces + 10; offset += 1000) {
    const json page = get_json("/api/traces?limit=1000&offset=" + std::to_string(offset));
    EXPECT_EQ(page["traces"].size(),
              std::min<size_t>(1000, kBookstoreTraces - std::min(offset, kBookstoreTraces)));
    for (const json& t : page["traces"]) seen.insert(t["trace_id"].get<std::string>());
  }
  EXPECT_EQ(seen.size(), kBookstoreTraces);
}

TEST_F(ServeApiTest, TimeWindowSelectsByStart) {
  const auto [all, matched] = catalog({}, analysis::TraceOrder::kStart, kBookstoreTraces);
  ASSERT_EQ(all.size(), kBookstoreTraces);
  const int64_t from = all[100].start, to = all[199].start;
  uint64_t expected = 0;
  for (const auto& e : all) expected += e.start >= from && e.start <= to;
  const json got =
      get_json("/api/traces?limit=0&from=" + std::to_string(from) + "&to=" + std::to_string(to));
  EXPECT_EQ(got["matched"], expected);
  EXPECT_GE(expected, 100u);
  EXPECT_EQ(got["traces"].size(), 0u);
}

TEST_F(ServeApiTest, OneTraceWithInclusiveAndExclusiveTimes) {
  const auto [first, matched] = catalog({}, analysis::TraceOrder::kLongest, 1);
  ASSERT_EQ(first.size(), 1u);
  const std::string id = std::to_string(first[0].trace_id);
  const json got = get_json("/api/traces/" + id);
  ASSERT_EQ(got["traces"].size(), 1u);
  const json& t = got["traces"][0];
  expect_same(t, first[0]);
  ASSERT_EQ(t["calls"].size(), first[0].executions);
  // Over a complete call tree, the exclusive times add up to the root's inclusive time.
  int64_t exclusive_sum = 0;
  for (const json& c : t["calls"]) {
    EXPECT_GE(c["exclusive_ns"].get<int64_t>(), 0);
    EXPECT_LE(c["exclusive_ns"].get<int64_t>(), c["inclusive_ns"].get<int64_t>());
    exclusive_sum += c["exclusive_ns"].get<int64_t>();
  }
  EXPECT_EQ(exclusive_sum, t["calls"][0]["inclusive_ns"].get<int64_t>());
  EXPECT_EQ(t["calls"][0]["ess"], 0);

  const json missing = get_json("/api/traces/12345", 404);
  EXPECT_NE(missing["error"].get<std::string>().find("12345"), std::string::npos);
  EXPECT_EQ(get_json("/api/traces/12x", 400)["parameter"], "id");
  EXPECT_EQ(get_json("/api/traces/" + id + "?x=1", 400)["parameter"], "x");
}

TEST_F(ServeApiTest, OperationStatisticsMatchTheSummary) {
  const analysis::AnalysisResult summary = analysis::analyze_log(bookstore_log());
  const json got = get_json("/api/operations")["operations"];
  ASSERT_EQ(got.size(), summary.operations.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& want = summary.operations[i];
    EXPECT_EQ(got[i]["operation"], std::string(want.key.operation));
    EXPECT_EQ(got[i]["count"], want.count);
    EXPECT_EQ(got[i]["min_ns"], want.inclusive.min);
    EXPECT_EQ(got[i]["max_ns"], want.inclusive.max);
    EXPECT_DOUBLE_EQ(got[i]["p50_ns"].get<double>(), want.inclusive.median);
    EXPECT_DOUBLE_EQ(got[i]["p99_ns"].get<double>(), want.inclusive.p99);
  }
  // Each bookstore search calls Catalog.getBook twice (once via CRM.getOffers).
  uint64_t get_book = 0;
  for (const json& o : got) {
    if (o["operation"] == "bookstoreTracing.Catalog.getBook(boolean)") get_book = o["count"];
  }
  EXPECT_EQ(get_book, 2 * kBookstoreTraces);
}

TEST_F(ServeApiTest, DependencyGraphAccountsForEveryCall) {
  const json graph = get_json("/api/graph.json");
  uint64_t calls = 0, from_entry = 0;
  for (const json& e : graph["edges"]) {
    calls += e["calls"].get<uint64_t>();
    if (e["caller"] == 0) from_entry += e["calls"].get<uint64_t>();
  }
  EXPECT_EQ(calls, get_json("/api/info")["executions"]);  // one incoming edge per execution
  EXPECT_EQ(from_entry, kBookstoreTraces);                // one entry per trace
  EXPECT_EQ(graph["nodes"][0]["label"], "Entry");

  const HttpReply svg = http_get(server_->port(), "/api/graph.svg");
  ASSERT_EQ(svg.status, 200) << svg.body;
  EXPECT_EQ(svg.header("content-type"), "image/svg+xml");
  EXPECT_NE(svg.body.find("<svg"), std::string::npos);
  EXPECT_NE(svg.body.find("Catalog.getBook"), std::string::npos);
}

TEST_F(ServeApiTest, BadParametersAreRejectedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/api/traces?limit=abc", "limit"},
      {"/api/traces?limit=-1", "limit"},
      {"/api/traces?limit=1001", "limit"},
      {"/api/traces?offset=1.5", "offset"},
      {"/api/traces?min_ns=5ms", "min_ns"},
      {"/api/traces?max_ns=99999999999999999999999", "max_ns"},
      {"/api/traces?min_ns=10&max_ns=5", "max_ns"},
      {"/api/traces?from=yesterday", "from"},
      {"/api/traces?from=10&to=5", "to"},
      {"/api/traces?failed=yes", "failed"},
      {"/api/traces?invalid=maybe", "invalid"},
      {"/api/traces?order=random", "order"},
      {"/api/traces?exact=1", "exact"},
      {"/api/traces?limit=1&limit=2", "limit"},
      {"/api/traces?opration=searchBook", "opration"},
      {"/api/info?verbose=1", "verbose"},
      {"/api/operations?sort=name", "sort"},
      {"/api/graph.json?level=host", "level"},
  };
  for (const auto& [target, parameter] : cases) {
    const json body = get_json(target, 400);
    EXPECT_EQ(body["parameter"], parameter) << target;
    EXPECT_NE(body["error"].get<std::string>().find(parameter), std::string::npos) << target;
  }
  EXPECT_EQ(get_json("/api/nothing", 404).count("error"), 1u);
}

TEST_F(ServeApiTest, AssetsComeFromMemoryOnly) {
  const HttpReply index = http_get(server_->port(), "/");
  ASSERT_EQ(index.status, 200);
  EXPECT_EQ(index.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("app.js"), std::string::npos);
  EXPECT_NE(index.header("content-security-policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(index.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(http_get(server_->port(), "/app.js").status, 200);
  EXPECT_EQ(http_get(server_->port(), "/style.css").status, 200);
  for (const std::string target :
       {"/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/app.js/../../etc/passwd",
        "/..%2f..%2fetc%2fpasswd", "//etc/passwd", "/CMakeLists.txt", "/web/app.js"}) {
    const HttpReply r = http_get(server_->port(), target);
    EXPECT_NE(r.status, 200) << target;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << target;
  }
  EXPECT_EQ(http_request(server_->port(), "POST", "/api/info", "Content-Length: 0\r\n").status,
            405);
  EXPECT_EQ(http_request(server_->port(), "DELETE", "/", "").status, 405);
}

TEST_F(ServeApiTest, ForeignHostHeaderIsRefusedWithoutToken) {
  // DNS rebinding: a page on evil.example resolving to 127.0.0.1.
  const HttpReply r = http_request(server_->port(), "GET", "/api/info", "", "evil.example:8080");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(http_request(server_->port(), "GET", "/api/info", "", "localhost:1").status, 200);
}

}  // namespace
}  // namespace sonde::serve::test
