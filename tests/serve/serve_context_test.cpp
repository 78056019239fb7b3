// /api/context and /api/context/tree over real TCP on loopback, on the
// Kieker bookstore log. Expected figures come from the analysis code that
// `sonde context` runs (read_context_log, summarize_levels, ContextTree) on
// the same log, never from the server.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_log.hpp"
#include "analysis/context/context_tree.hpp"
#include "http_get.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"

namespace sonde::serve::test {
namespace {

using nlohmann::json;

class ServeContextTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    store_ = new store::MemoryStore(bookstore_log());
    log_ = new analysis::ContextLog(analysis::read_context_log(bookstore_log()));
  }
  static void TearDownTestSuite() {
    delete store_;
    delete log_;
    store_ = nullptr;
    log_ = nullptr;
  }
  void SetUp() override {
    ServeOptions o;
    o.port = 0;
    o.context_log = bookstore_log();
    server_ = std::make_unique<RunningServer>(*store_, o);
  }
  json get_json(const std::string& target, int expect_status = 200) {
    const HttpReply r = http_get(server_->port(), target);
    EXPECT_EQ(r.status, expect_status) << target << ": " << r.body;
    return json::parse(r.body);
  }
  static store::MemoryStore* store_;
  static analysis::ContextLog* log_;
  std::unique_ptr<RunningServer> server_;
};
store::MemoryStore* ServeContextTest::store_ = nullptr;
analysis::ContextLog* ServeContextTest::log_ = nullptr;

TEST_F(ServeContextTest, SummaryMatchesTheContextAnalysis) {
  const analysis::ContextData& data = log_->data;
  ASSERT_GT(data.observations.size(), 0u);
  const analysis::ContextIndex index(data);
  const analysis::ContextLevelReport levels = analysis::summarize_levels(data, index);
  analysis::ContextTree tree(data, index);
  analysis::ContextTreeOptions options;  // the defaults of `sonde context`
  tree.apply_operators(options);
  const analysis::ContextModelSummary model = tree.summarize();

  const json got = get_json("/api/context");
  EXPECT_EQ(got["log"]["executions"], data.observations.size());
  EXPECT_EQ(got["log"]["traces"], data.traces);
  EXPECT_EQ(got["log"]["operations"], data.operations.size());
  ASSERT_EQ(got["levels"].size(), 5u);
  const char* names[] = {"operation", "caller", "stack", "trace", "model"};
  for (size_t l = 0; l < 4; ++l) {
    EXPECT_EQ(got["levels"][l]["level"], names[l]);
    EXPECT_EQ(got["levels"][l]["contexts"], levels.levels[l].contexts) << names[l];
    EXPECT_DOUBLE_EQ(got["levels"][l]["sd_reduction_percent"].get<double>(),
                     levels.levels[l].reduction_percent);
  }
  EXPECT_EQ(got["levels"][4]["contexts"], model.entities);
  EXPECT_DOUBLE_EQ(got["levels"][4]["sd_reduction_percent"].get<double>(), model.reduction_percent);
  // Contexts refine each other: operation ≤ caller ≤ stack ≤ trace.
  for (size_t l = 1; l < 4; ++l) {
    EXPECT_LE(got["levels"][l - 1]["contexts"].get<size_t>(),
              got["levels"][l]["contexts"].get<size_t>());
  }
  ASSERT_EQ(got["operations"].size(), data.operations.size());
  uint64_t executions = 0;
  for (const json& op : got["operations"]) executions += op["executions"].get<uint64_t>();
  EXPECT_EQ(executions, data.observations.size());
}

TEST_F(ServeContextTest, ModelParametersChangeTheModel) {
  // With no merging and no linking the model keeps every trace context that
  // operator 1 does not fold into an only-child parent: at least the caller
  // level's count, and more than the default model.
  const json strict = get_json("/api/context?min_observations=0&similarity=0");
  const json loose = get_json("/api/context?min_observations=1000000&similarity=1000");
  EXPECT_EQ(strict["model"]["merged"], 0);
  EXPECT_EQ(strict["model"]["min_observations"], 0);
  EXPECT_GE(strict["levels"][4]["contexts"].get<size_t>(),
            loose["levels"][4]["contexts"].get<size_t>());
  // Linking everything to the operation leaves one distribution per operation.
  EXPECT_EQ(loose["levels"][4]["contexts"], log_->data.operations.size());
}

TEST_F(ServeContextTest, TreeIsConsistentAndLimited) {
  const json all = get_json("/api/context/tree?max_nodes=5000");
  const json& nodes = all["nodes"];
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(nodes[0]["level"], "root");
  EXPECT_EQ(nodes[0]["n"], log_->data.observations.size());
  EXPECT_EQ(all["shown_nodes"], nodes.size());
  EXPECT_EQ(all["total_nodes"].get<size_t>(), nodes.size() + all["omitted_by_size"].get<size_t>() +
                                                  all["omitted_by_depth"].get<size_t>());
  // Every child's parent comes before it, and children partition their parent.
  std::map<int64_t, uint64_t> n_of, child_sum;
  std::map<int64_t, size_t> child_count;
  for (const json& node : nodes) {
    const int64_t id = node["id"], parent = node["parent"];
    n_of[id] = node["n"];
    if (parent < 0) continue;
    ASSERT_TRUE(n_of.contains(parent)) << "node " << id << " before its parent";
    child_sum[parent] += node["n"].get<uint64_t>();
    ++child_count[parent];
  }
  for (const json& node : nodes) {
    const int64_t id = node["id"];
    EXPECT_EQ(child_count[id], node["children"].get<size_t>()) << id;
    if (node["children"].get<size_t>() > 0) {
      EXPECT_EQ(child_sum[id], n_of[id]) << id;
    }
  }
  // The operation level holds one node per operation.
  size_t ops = 0;
  for (const json& node : nodes) ops += node["level"] == "operation";
  EXPECT_EQ(ops, log_->data.operations.size());

  const json shallow = get_json("/api/context/tree?depth=1");
  EXPECT_EQ(shallow["nodes"].size(), 1 + log_->data.operations.size());
  EXPECT_EQ(shallow["total_nodes"], all["total_nodes"]);
  const json small = get_json("/api/context/tree?max_nodes=3");
  EXPECT_EQ(small["nodes"].size(), 3u);
  EXPECT_EQ(small["omitted_by_size"].get<size_t>() + small["omitted_by_depth"].get<size_t>() + 3,
            small["total_nodes"].get<size_t>());
}

TEST_F(ServeContextTest, TreeOfOneOperation) {
  const std::string& op = log_->data.operations.at(0);
  const json got = get_json("/api/context/tree?operation=" + url_encode(op));
  ASSERT_FALSE(got["nodes"].empty());
  EXPECT_EQ(got["nodes"][0]["level"], "operation");
  EXPECT_EQ(got["nodes"][0]["label"], op);
  for (const json& node : got["nodes"]) EXPECT_NE(node["level"], "root");
  const json missing = get_json("/api/context/tree?operation=no.such.Op()", 404);
  EXPECT_EQ(missing["parameter"], "operation");
}

TEST_F(ServeContextTest, BadParametersAreRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {"/api/context/tree?depth=0", "depth"},
      {"/api/context/tree?depth=5", "depth"},
      {"/api/context/tree?max_nodes=5001", "max_nodes"},
      {"/api/context/tree?max_nodes=abc", "max_nodes"},
      {"/api/context?similarity=-1", "similarity"},
      {"/api/context?similarity=nan", "similarity"},
      {"/api/context?min_observations=1e3", "min_observations"},
      {"/api/context?max_leaves=-2", "max_leaves"},
      {"/api/context?depth=2", "depth"},  // a tree parameter on the summary
      {"/api/context?min_observations=1&min_observations=2", "min_observations"},
      {"/api/context/tree?operation=", "operation"},
      {"/api/context/tree?colour=red", "colour"},
  };
  for (const auto& [target, parameter] : cases) {
    const json got = get_json(target, 400);
    EXPECT_EQ(got["parameter"], parameter) << target;
    EXPECT_NE(got["error"].get<std::string>().find(parameter), std::string::npos) << target;
  }
}

TEST(ServeContextOffTest, WithoutALogTheViewSaysSo) {
  store::MemoryStore store(bookstore_log());
  ServeOptions o;
  o.port = 0;
  RunningServer server(store, o);
  const HttpReply r = http_get(server.port(), "/api/context");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("calling-context"), std::string::npos);
}

}  // namespace
}  // namespace sonde::serve::test
