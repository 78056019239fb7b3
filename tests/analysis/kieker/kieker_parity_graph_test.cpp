// Kieker's dependency graphs (container, component and operation level,
// assembly and deployment, plain and response-time decorated) against the
// .dot files Kieker's trace-analysis wrote. Both sides are parsed into
// nodes (id, label, shape, fill, enclosing clusters) and edges (count,
// style); only the order of lines may differ (Kieker's is its hash maps').
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <set>

#include "kieker/kieker_parity_support.hpp"

namespace sonde::analysis {
namespace {

using namespace parity;

struct ParsedGraph {
  std::map<std::string, std::string> nodes;  // id -> "label|shape|fill|clusters"
  std::map<std::string, std::string> edges;  // "a->b" -> "count|style"
  size_t lines = 0;
};

ParsedGraph parse_kieker_graph(const std::string& text) {
  static const std::regex node_re(
      R"re(^"(depNode_\d+)" \[label="((?:[^"\\]|\\.)*)",shape="(\w+)"(?:,style="filled",color="#000000",fillcolor="(\w+)")?\]$)re");
  static const std::regex edge_re(
      R"re(^(depNode_\d+)->(depNode_\d+)\[label=(\d+), style="(\w+)", arrowhead="open", color="#000000"\]$)re");
  static const std::regex cluster_re(R"re(^subgraph "(cluster_\w+)" \{$)re");
  static const std::regex cluster_label_re(R"re(^ label = "((?:[^"\\]|\\.)*)";$)re");
  ParsedGraph g;
  std::vector<std::string> clusters;  // "cluster_container2=<<execution container>>\nSRV0"
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    ++g.lines;
    if (std::regex_match(line, m, cluster_re)) {
      clusters.push_back(m[1]);
    } else if (std::regex_match(line, m, cluster_label_re) && !clusters.empty()) {
      clusters.back() += "=" + m[1].str();
    } else if (line == "}" && !clusters.empty()) {
      clusters.pop_back();
    } else if (std::regex_match(line, m, node_re)) {
      std::string where;
      for (const std::string& c : clusters) where += "/" + c;
      EXPECT_EQ(g.nodes.count(m[1]), 0u) << "node twice: " << line;
      g.nodes[m[1]] = m[2].str() + "|" + m[3].str() + "|" + m[4].str() + "|" + where;
    } else if (std::regex_match(line, m, edge_re)) {
      g.edges[m[1].str() + "->" + m[2].str()] = m[3].str() + "|" + m[4].str();
    } else {
      // Everything else is fixed layout text.
      static const std::set<std::string> layout = {"digraph G {",
                                                   " rankdir=LR;",
                                                   "",
                                                   " shape = \"box\";",
                                                   " style = \"filled\";",
                                                   " fillcolor = \"white\";",
                                                   "}"};
      EXPECT_TRUE(layout.count(line)) << "unexpected line: " << line;
    }
  }
  EXPECT_TRUE(clusters.empty());
  return g;
}

std::optional<TimeUnit> decoration_unit(const std::string& golden) {
  static const std::regex re(R"(min: -?\d+(ns|us|ms|s), avg)");
  std::smatch m;
  TimeUnit unit{};
  if (std::regex_search(golden, m, re) && parse_time_unit(m[1].str(), &unit)) return unit;
  return std::nullopt;
}

// Turns on the graph a golden file name stands for ("responseTime-" is the
// file prefix HOW-GENERATED.txt used for the decorated ones).
bool request_graph(std::string name, std::optional<TimeUnit> unit, KiekerOutputOptions* o) {
  if (name.starts_with("responseTime-")) name = name.substr(13);
  const std::map<std::string, GraphRequest*> by_file = {
      {"containerDependencyGraph.dot", &o->container_graph},
      {"assemblyComponentDependencyGraph.dot", &o->assembly_component_graph},
      {"deploymentComponentDependencyGraph.dot", &o->deployment_component_graph},
      {"assemblyOperationDependencyGraph.dot", &o->assembly_operation_graph},
      {"deploymentOperationDependencyGraph.dot", &o->deployment_operation_graph},
  };
  auto it = by_file.find(name);
  if (it == by_file.end()) return false;
  it->second->enabled = true;
  it->second->response_times = unit;
  return true;
}

void expect_graphs_match(const std::string& log, size_t expected_files) {
  size_t compared = 0;
  for (const auto& entry : fs::directory_iterator(golden_dir(log))) {
    std::string name = entry.path().filename().string();
    if (!name.ends_with("DependencyGraph.dot")) continue;
    const std::string golden = read_file(entry.path());
    KiekerOutputOptions o;
    o.short_labels = true;  // as in HOW-GENERATED.txt
    ASSERT_TRUE(request_graph(name, decoration_unit(golden), &o)) << name;
    ParityRun run = run_parity(log, o);
    ASSERT_EQ(run.files.size(), 1u);
    const std::string& ours = run.files.begin()->second;
    const ParsedGraph want = parse_kieker_graph(golden);
    const ParsedGraph got = parse_kieker_graph(ours);
    ASSERT_GT(want.nodes.size(), 1u) << name;
    EXPECT_EQ(got.nodes, want.nodes) << log << "/" << name;
    EXPECT_EQ(got.edges, want.edges) << log << "/" << name;
    EXPECT_EQ(got.lines, want.lines) << log << "/" << name;
    ++compared;
  }
  EXPECT_EQ(compared, expected_files) << log;
}

TEST(KiekerParityGraph, BookstoreGraphsAndResponseTimesMatchKiekers) {
  // 5 plain graphs + 4 decorated ones (ms, ns, us, ns).
  expect_graphs_match("bookstore-oer-2010", 9);
}

TEST(KiekerParityGraph, Events2014GraphsMatchKiekersWithAssumedCalls) {
  expect_graphs_match("events-2014", 5);
}

TEST(KiekerParityGraph, SelfLoopsAreCountedButDrawnOnlyOnRequest) {
  // events-2014 has nested calls inside one container: a self-loop there.
  KiekerOutputOptions o;
  o.container_graph.enabled = true;
  ParsedGraph g = parse_kieker_graph(run_parity("events-2014", o).files.begin()->second);
  EXPECT_EQ(g.edges.count("depNode_1->depNode_1"), 0u);
  o.include_self_loops = true;
  g = parse_kieker_graph(run_parity("events-2014", o).files.begin()->second);
  // main calls two operations, run calls one: three calls SE -> SE.
  EXPECT_EQ(g.edges["depNode_1->depNode_1"], "3|solid");
}

TEST(KiekerParityGraph, ResponseTimesTruncatePerCallAndRoundTheMean) {
  EXPECT_EQ(convert_ns(1'999'999, TimeUnit::kMilliseconds), 1);
  EXPECT_EQ(convert_ns(-1'999, TimeUnit::kMicroseconds), -1);  // toward zero, as Java
  EXPECT_EQ(convert_ns(2'500'000'000, TimeUnit::kSeconds), 2);
  ResponseTimes t;
  t.add(1);
  t.add(2);
  EXPECT_EQ(t.rounded_mean(), 2);  // 1.5 rounds up, as Math.round
  t.add(2);
  EXPECT_EQ(t.rounded_mean(), 2);
  EXPECT_EQ(t.min, 1);
  EXPECT_EQ(t.max, 2);
  EXPECT_EQ(t.total, 5);
}

}  // namespace
}  // namespace sonde::analysis
