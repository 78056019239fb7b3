// Real Kieker logs against the output Kieker's own trace-analysis produced
// from them (tests/data/kieker/*/kieker-trace-analysis-output). Every
// expected number is parsed from those golden files, never copied from
// sonde's output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/model/aggregated_call_tree.hpp"
#include "analysis/model/dependency_graph.hpp"
#include "analysis/model/operation_signature.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "kieker/kieker_parity_support.hpp"

namespace sonde::analysis {
namespace {

namespace fs = std::filesystem;

using parity::kKieker;
using parity::read_file;

std::vector<std::string> file_lines(const fs::path& p) { return parity::lines_of(read_file(p)); }

// Splits a DOT label at its "\n" escapes.
std::vector<std::string> label_lines(const std::string& label) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t pos; (pos = label.find("\\n", start)) != std::string::npos; start = pos + 2) {
    out.push_back(label.substr(start, pos - start));
  }
  out.push_back(label.substr(start));
  return out;
}

// "@3:..Bookstore" -> "Bookstore" (Kieker's short component label).
std::string strip_component(const std::string& s) {
  static const std::regex re(R"(^@\d+:(\.\.)?)");
  return std::regex_replace(s, re, "");
}

// Node identity as both sides can name it: host|Component|op(..)
std::string key_text(std::string_view host, std::string_view component, std::string_view op) {
  return std::string(host) + "|" + std::string(component) + "|" + std::string(op);
}

std::string our_key(const OperationKey& k) {
  return key_text(k.host, short_class_label(k.component), short_operation_label(k.operation));
}

using EdgeCounts = std::map<std::pair<std::string, std::string>, uint64_t>;

// Kieker's operation dependency graph: nodes inside container/component
// clusters, edges "depNode_a->depNode_b[label=N, ...]".
EdgeCounts parse_golden_dependency_graph(const fs::path& file) {
  static const std::regex node_re(R"re(^"(depNode_\d+)" \[label="([^"]*)")re");
  static const std::regex edge_re(R"re(^(depNode_\d+)->(depNode_\d+)\[label=(\d+))re");
  static const std::regex label_re(R"re(^ label = "([^"]*)";)re");
  std::map<std::string, std::string> nodes;
  std::vector<std::string> open;  // "container" / "component"
  std::string host, component;
  EdgeCounts edges;
  for (const std::string& line : file_lines(file)) {
    std::smatch m;
    if (line.starts_with("subgraph \"cluster_container")) {
      open.push_back("container");
    } else if (line.starts_with("subgraph \"cluster_component")) {
      open.push_back("component");
    } else if (line == "}" && !open.empty()) {
      (open.back() == "container" ? host : component).clear();
      open.pop_back();
    } else if (std::regex_search(line, m, label_re) && !open.empty()) {
      const std::string value = label_lines(m[1]).back();
      if (open.back() == "container") host = value;
      if (open.back() == "component") component = strip_component(value);
    } else if (std::regex_search(line, m, node_re)) {
      const std::string label = m[2];
      nodes[m[1]] = label == "'Entry'" ? "'Entry'" : key_text(host, component, label);
    } else if (std::regex_search(line, m, edge_re)) {
      edges[{nodes.at(m[1]), nodes.at(m[2])}] += std::stoull(m[3]);
    }
  }
  return edges;
}

EdgeCounts our_dependency_edges(const DependencyGraph& g) {
  EdgeCounts edges;
  auto name = [&](int32_t n) {
    return n == 0 ? std::string("'Entry'") : our_key(g.nodes()[n].key);
  };
  for (const DependencyEdge& e : g.edges()) edges[{name(e.caller), name(e.callee)}] += e.calls;
  return edges;
}

// Kieker's aggregated call tree: 'N[label ="SRV0::\n@3:..Bookstore\n.searchBook()"...]'
// and 'P->C[...label="count" ]'. Returns call path -> count.
std::map<std::string, uint64_t> parse_golden_call_tree(const fs::path& file) {
  static const std::regex node_re(R"re(^(\d+)\[label ="([^"]*)")re");
  static const std::regex edge_re(R"re(^(\d+)->(\d+)\[.*label="(\d+)")re");
  std::map<int, std::string> key;
  std::map<int, int> parent;
  std::map<int, uint64_t> count;
  for (const std::string& line : file_lines(file)) {
    std::smatch m;
    if (std::regex_search(line, m, node_re)) {
      std::vector<std::string> parts = label_lines(m[2]);
      if (parts.size() == 1) continue;  // 'Entry'
      std::string host;
      if (parts.size() == 3) host = parts[0].substr(0, parts[0].size() - 2);  // "SRV0::"
      const std::string& op = parts.back();
      key[std::stoi(m[1])] =
          key_text(host, strip_component(parts[parts.size() - 2]), op.substr(1));  // ".op()"
    } else if (std::regex_search(line, m, edge_re)) {
      parent[std::stoi(m[2])] = std::stoi(m[1]);
      count[std::stoi(m[2])] = std::stoull(m[3]);
    }
  }
  std::map<std::string, uint64_t> paths;
  for (const auto& [node, c] : count) {
    std::string path;
    for (int n = node; n != 0; n = parent.at(n)) path = key.at(n) + " / " + path;
    paths[path] += c;
  }
  return paths;
}

std::map<std::string, uint64_t> our_call_paths(const AggregatedCallTree& tree) {
  std::map<std::string, uint64_t> paths;
  const auto& nodes = tree.nodes();
  for (size_t i = 1; i < nodes.size(); ++i) {
    std::string path;
    for (int32_t n = static_cast<int32_t>(i); n != 0; n = nodes[n].parent) {
      path = our_key(nodes[n].key) + " / " + path;
    }
    paths[path] += nodes[i].time.count;
  }
  return paths;
}

// One analysis pass producing the graphs on both levels and keeping the
// valid traces whose ids are asked for.
struct GoldenRun {
  explicit GoldenRun(const fs::path& log, std::set<int64_t> keep_ids = {})
      : keep(std::move(keep_ids)) {
    AnalysisOptions o;
    o.graph_level = AggregationLevel::kDeployment;
    TraceAnalysis analysis(o);
    analysis.add_sink(assembly_tree);
    analysis.add_sink(assembly_graph);
    analysis.add_sink(keeper);
    const format::LogReadStats read = format::read_log(log.string(), analysis.records());
    result = analysis.finish();
    result.read = read;
  }
  struct Keeper : TraceSink {
    GoldenRun* run;
    explicit Keeper(GoldenRun* r) : run(r) {}
    void on_trace(const Trace& t) override {
      run->valid_ids.insert(t.trace_id);
      if (run->keep.count(t.trace_id)) run->kept[t.trace_id] = t;
    }
    void on_invalid_trace(const InvalidTrace& t) override { run->invalid_ids.insert(t.trace_id); }
  };
  std::set<int64_t> keep;
  AggregatedCallTree assembly_tree{AggregationLevel::kAssembly};
  DependencyGraph assembly_graph{AggregationLevel::kAssembly};
  Keeper keeper{this};
  std::set<int64_t> valid_ids, invalid_ids;
  std::map<int64_t, Trace> kept;
  AnalysisResult result;
};

// Trace ids Kieker named in its output: call trees, sequence diagrams,
// execution traces and equivalence-class representatives.
std::set<int64_t> golden_trace_ids(const fs::path& dir) {
  std::set<int64_t> ids;
  static const std::regex file_re(
      R"(^(callTree|deploymentSequenceDiagram|assemblySequenceDiagram)-(\d+)\.)");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_search(name, m, file_re)) ids.insert(std::stoll(m[2]));
  }
  static const std::regex trace_re(R"(^TraceId (\d+) )");
  static const std::regex rep_re(R"(representative: (\d+);)");
  for (const char* f : {"executionTraces.txt", "traceDeploymentEquivClasses.txt",
                        "traceAssemblyEquivClasses.txt"}) {
    for (const std::string& line : file_lines(dir / f)) {
      std::smatch m;
      if (std::regex_search(line, m, trace_re) || std::regex_search(line, m, rep_re)) {
        ids.insert(std::stoll(m[1]));
      }
    }
  }
  return ids;
}

TEST(KiekerGolden, BookstoreTracesAreAllValid) {
  const fs::path dir = kKieker / "bookstore-oer-2010";
  const fs::path golden = dir / "kieker-trace-analysis-output";
  const std::set<int64_t> ids = golden_trace_ids(golden);
  ASSERT_GE(ids.size(), 4u);
  GoldenRun run(dir / "log", ids);
  ASSERT_TRUE(run.result.read.ok) << (run.result.read.errors.empty() ? ""
                                                                     : run.result.read.errors[0]);
  EXPECT_EQ(run.result.traces.valid, 1635u);  // README.orig: "monitoring data of 1635 traces"
  EXPECT_EQ(run.result.traces.invalid, 0u);
  EXPECT_EQ(run.valid_ids.size(), 1635u);
  for (int64_t id : ids) EXPECT_TRUE(run.valid_ids.count(id)) << "golden trace " << id;
}

TEST(KiekerGolden, BookstoreExecutionsMatchKiekersExecutionTraces) {
  // "<6488138950668976129[1,1] 1283156498770900902-1283156498773404399
  // SRV1::@1:bookstoreTracing.Catalog.getBook N/A>"
  const fs::path dir = kKieker / "bookstore-oer-2010";
  static const std::regex re(R"(^<(\d+)\[(\d+),(\d+)\] (\d+)-(\d+) ([^:]+)::@\d+:(\S+) (\S+)>$)");
  struct Golden {
    int64_t trace;
    int32_t eoi, ess;
    int64_t tin, tout;
    std::string host, op, session;
  };
  std::vector<Golden> golden;
  std::set<int64_t> ids;
  for (const std::string& line :
       file_lines(dir / "kieker-trace-analysis-output/executionTraces.txt")) {
    std::smatch m;
    if (!std::regex_match(line, m, re)) continue;
    golden.push_back({std::stoll(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoll(m[4]),
                      std::stoll(m[5]), m[6], m[7], m[8]});
    ids.insert(golden.back().trace);
  }
  ASSERT_GE(golden.size(), 4u);
  GoldenRun run(dir / "log", ids);
  std::map<int64_t, size_t> executions_per_trace;
  for (const Golden& g : golden) {
    ++executions_per_trace[g.trace];
    ASSERT_TRUE(run.kept.count(g.trace)) << g.trace;
    const Trace& t = run.kept.at(g.trace);
    ASSERT_LT(static_cast<size_t>(g.eoi), t.executions.size());
    const Execution& e = t.executions[g.eoi];
    EXPECT_EQ(e.eoi, g.eoi);
    EXPECT_EQ(e.ess, g.ess) << g.trace << "[" << g.eoi << "]";
    EXPECT_EQ(e.tin, g.tin);
    EXPECT_EQ(e.tout, g.tout);
    EXPECT_EQ(e.host, g.host);
    EXPECT_EQ(t.session, g.session);
    // Kieker prints class.operation without the parameter list.
    const SignatureParts p = split_operation_signature(e.operation);
    EXPECT_EQ(std::string(p.qualified_class) + "." + std::string(p.name), g.op);
  }
  for (const auto& [id, n] : executions_per_trace) EXPECT_EQ(run.kept.at(id).executions.size(), n);
}

struct GraphCase {
  const char* log;
  const char* golden_file;
  bool deployment;
};

void expect_dependency_graph_matches(const GraphCase& c) {
  const fs::path dir = kKieker / c.log;
  const EdgeCounts expected =
      parse_golden_dependency_graph(dir / "kieker-trace-analysis-output" / c.golden_file);
  ASSERT_FALSE(expected.empty()) << c.golden_file;
  GoldenRun run(dir / "log");
  const DependencyGraph& ours = c.deployment ? *run.result.dependency_graph : run.assembly_graph;
  EXPECT_EQ(our_dependency_edges(ours), expected) << c.log << "/" << c.golden_file;
}

void expect_call_tree_matches(const GraphCase& c) {
  const fs::path dir = kKieker / c.log;
  const auto expected =
      parse_golden_call_tree(dir / "kieker-trace-analysis-output" / c.golden_file);
  ASSERT_FALSE(expected.empty()) << c.golden_file;
  GoldenRun run(dir / "log");
  const AggregatedCallTree& ours = c.deployment ? *run.result.call_tree : run.assembly_tree;
  EXPECT_EQ(our_call_paths(ours), expected) << c.log << "/" << c.golden_file;
}

TEST(KiekerGolden, BookstoreDependencyGraphCallCounts) {
  expect_dependency_graph_matches(
      {"bookstore-oer-2010", "deploymentOperationDependencyGraph.dot", true});
  expect_dependency_graph_matches(
      {"bookstore-oer-2010", "assemblyOperationDependencyGraph.dot", false});
}

TEST(KiekerGolden, BookstoreAggregatedCallTrees) {
  expect_call_tree_matches({"bookstore-oer-2010", "aggregatedDeploymentCallTree.dot", true});
  expect_call_tree_matches({"bookstore-oer-2010", "aggregatedAssemblyCallTree.dot", false});
}

TEST(KiekerGolden, Events2014FlowTraces) {
  const fs::path dir = kKieker / "events-2014";
  GoldenRun run(dir / "log");
  EXPECT_TRUE(run.result.read.ok);
  EXPECT_EQ(run.result.traces.valid, 2u);
  EXPECT_EQ(run.result.traces.invalid, 0u);
  expect_dependency_graph_matches({"events-2014", "deploymentOperationDependencyGraph.dot", true});
  expect_dependency_graph_matches({"events-2014", "assemblyOperationDependencyGraph.dot", false});
  expect_call_tree_matches({"events-2014", "aggregatedDeploymentCallTree.dot", true});
  expect_call_tree_matches({"events-2014", "aggregatedAssemblyCallTree.dot", false});
}

TEST(KiekerGolden, Events2017SingletonIsOneValidTrace) {
  // No golden output; the log has one thread's trace: main -> run -> 50 x compute.
  GoldenRun run(kKieker / "events-2017-singleton" / "log");
  EXPECT_TRUE(run.result.read.ok);
  EXPECT_EQ(run.result.traces.valid, 1u);
  EXPECT_EQ(run.result.traces.invalid, 0u);
  EXPECT_EQ(run.result.traces.executions, 52u);
  EXPECT_EQ(run.result.traces.max_depth, 3);
}

}  // namespace
}  // namespace sonde::analysis
