// `sonde graph --out X.json`: the dependency graph and the aggregated call
// tree as JSON are consistent with the trace counts of the same log: the
// Entry node calls each trace's entry once, each operation is called as often
// as it executed, and the call tree's nodes add up the same way.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

using nlohmann::json;

json read_graph_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

TEST_F(SondeCli, GraphJsonAddsUpToTheTraces) {
  for (const char* name : {"bookstore-oer-2010", "events-2014"}) {
    const std::string log = (kKieker / name / "log").string();
    const CliRun s = sonde({"traces", log, "--summary", "--json"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const uint64_t traces = json::parse(s.out)["traces"].get<uint64_t>();

    const fs::path deps = dir_ / "deps.json";
    CliRun r = sonde({"graph", log, "--kind", "dependency", "--out", deps.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json g = read_graph_json(deps);
    std::map<int64_t, uint64_t> incoming;
    uint64_t from_entry = 0;
    for (const json& e : g["edges"]) {
      incoming[e["callee"].get<int64_t>()] += e["calls"].get<uint64_t>();
      if (e["caller"].get<int64_t>() == 0) from_entry += e["calls"].get<uint64_t>();
    }
    EXPECT_EQ(from_entry, traces) << name;
    ASSERT_TRUE(g["nodes"][0]["entry"].get<bool>());
    for (size_t i = 1; i < g["nodes"].size(); ++i) {
      const json& n = g["nodes"][i];
      EXPECT_EQ(n["calls"].get<uint64_t>(), incoming[n["id"].get<int64_t>()])
          << name << " " << n["operation"];
    }

    const fs::path tree = dir_ / "tree.json";
    r = sonde({"graph", log, "--kind", "calltree", "--out", tree.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json t = read_graph_json(tree);
    EXPECT_EQ(t["traces"].get<uint64_t>(), traces);
    uint64_t root_calls = 0;
    for (int64_t child : t["nodes"][0]["children"]) {
      root_calls += t["nodes"][child]["calls"].get<uint64_t>();
    }
    EXPECT_EQ(root_calls, traces) << name;
    for (const json& n : t["nodes"]) {
      for (int64_t child : n["children"]) EXPECT_EQ(t["nodes"][child]["parent"], n["id"]);
    }
  }
}

}  // namespace
}  // namespace sonde::test
