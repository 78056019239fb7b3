// `sonde serve` answers with a native log's operations named as C++ users
// write them (format/operation_name.hpp), from the in-memory store and from
// the embedded SQLite index alike. The log: tests/cpp_names_log.hpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../cpp_names_log.hpp"
#include "http_get.hpp"
#include "serve_test_support.hpp"
#include "store/index_build.hpp"
#include "store/memory_store.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::serve::test {
namespace {

using nlohmann::json;
using sonde::test::CppNamedOperation;
using sonde::test::kCppNamedTraces;
using sonde::test::kCppNames;

json get_json(int port, const std::string& target) {
  const HttpReply r = http_get(port, target);
  EXPECT_EQ(r.status, 200) << target << ": " << r.body;
  return json::parse(r.body);
}

void expect_cpp_names_served(store::TraceStore& store) {
  ServeOptions options;
  options.port = 0;
  RunningServer server(store, options);
  std::set<std::string> shown;
  for (const CppNamedOperation& op : kCppNames) shown.insert(op.shown);

  const json traces = get_json(server.port(), "/api/traces");
  ASSERT_EQ(traces["traces"].size(), static_cast<size_t>(kCppNamedTraces)) << traces.dump(1);
  for (const json& t : traces["traces"]) EXPECT_EQ(t["root_operation"], "main");

  std::set<std::string> operations;
  const json stats = get_json(server.port(), "/api/operations");
  for (const json& o : stats["operations"]) operations.insert(o["operation"].get<std::string>());
  EXPECT_EQ(operations, shown);

  const std::string id = traces["traces"][0]["trace_id"];
  const json trace = get_json(server.port(), "/api/traces/" + id);
  std::set<std::string> in_trace;
  std::map<std::string, std::string> component;
  for (const json& part : trace["traces"])
    for (const json& e : part["calls"]) {
      in_trace.insert(e["operation"].get<std::string>());
      component[e["operation"]] = e["component"];
    }
  EXPECT_EQ(in_trace, shown) << trace.dump(1);
  // A member's component is its class; a free function's, its module.
  EXPECT_EQ(component["shapes::Circle::area() const"], "shapes::Circle");
  EXPECT_EQ(component["main"], "shapes_app");

  std::set<std::string> labels;
  const json graph = get_json(server.port(), "/api/graph.json");
  for (const json& n : graph["nodes"]) labels.insert(n["label"].get<std::string>());
  EXPECT_TRUE(labels.count("Circle::area()")) << json(labels).dump();
  EXPECT_TRUE(labels.count("Inventory::add(..)")) << json(labels).dump();
  EXPECT_TRUE(labels.count("main")) << json(labels).dump();
}

TEST(ServeCppNames, FromALogInMemory) {
  const std::string log = ::testing::TempDir() + "serve_cpp_names.sonde";
  ASSERT_TRUE(sonde::test::write_cpp_names_log(log));
  store::MemoryStore store(log);
  expect_cpp_names_served(store);
}

TEST(ServeCppNames, FromTheEmbeddedIndex) {
  const std::string log = ::testing::TempDir() + "serve_cpp_names_index.sonde";
  const std::string dir = ::testing::TempDir() + "serve_cpp_names_index";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(sonde::test::write_cpp_names_log(log));
  const store::IndexBuildResult built = store::build_index_from_log(log, dir);
  ASSERT_EQ(built.error, "");
  std::string error;
  auto store = store::SqliteStore::open(dir + "/index.sqlite", &error);
  ASSERT_NE(store, nullptr) << error;
  expect_cpp_names_served(*store);
}

}  // namespace
}  // namespace sonde::serve::test
