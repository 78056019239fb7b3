// DOT escaping with hostile operation names, DOT text for both graphs, and
// rendering through the Graphviz `dot` program (skipped where it is absent).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/model/aggregated_call_tree.hpp"
#include "analysis/model/dependency_graph.hpp"
#include "analysis/render/graph_dot.hpp"
#include "analysis/render/graphviz_render.hpp"
#include "analysis/text/dot_escape.hpp"

namespace sonde::analysis {
namespace {

const std::string kHostile = "evil\"op\\N\n</text><script>alert('x')</script> & std::map<int, T&>";

// Every '"' inside the quotes is escaped, and no raw newline survives.
void expect_well_quoted(const std::string& q) {
  ASSERT_GE(q.size(), 2u);
  EXPECT_EQ(q.front(), '"');
  EXPECT_EQ(q.back(), '"');
  EXPECT_EQ(q.find('\n'), std::string::npos);
  for (size_t i = 1; i + 1 < q.size(); ++i) {
    if (q[i] == '\\') {
      ++i;  // escaped character
      continue;
    }
    EXPECT_NE(q[i], '"') << "unescaped quote at " << i << " in " << q;
  }
}

TEST(DotEscape, QuotesBackslashesAndNewlines) {
  EXPECT_EQ(dot_quote("plain"), "\"plain\"");
  EXPECT_EQ(dot_quote("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(dot_quote("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(dot_quote("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(dot_quote("tab\there\r"), "\"tab?here?\"");
  EXPECT_EQ(dot_quote("<b>&amp;</b>"), "\"<b>&amp;</b>\"");  // no HTML labels: kept as text
  expect_well_quoted(dot_quote(kHostile));
  // A trailing backslash cannot escape the closing quote.
  expect_well_quoted(dot_quote("ends with \\"));
  EXPECT_EQ(dot_quote("ends with \\"), "\"ends with \\\\\"");
}

TEST(DotEscape, Utf8IsKeptInvalidBytesReplaced) {
  EXPECT_EQ(dot_quote("Zeit µs → größer"), "\"Zeit µs → größer\"");
  EXPECT_EQ(dot_quote(std::string("bad\xff\xc0\x80x")), "\"bad???x\"");
  EXPECT_EQ(dot_quote(std::string("cut\xe2\x82")), "\"cut??\"");
}

TEST(DotEscape, LabelsJoinEscapedLines) {
  const std::vector<std::string> lines = {"a\"", "b\nc"};
  EXPECT_EQ(dot_label(lines), "\"a\\\"\\nb\\nc\"");
}

Trace hostile_trace() {
  Execution root;
  root.operation = "void main()";
  root.component = "app";
  root.host = "h\"ost";
  root.tin = 0;
  root.tout = 100;
  Execution child = root;
  child.operation = kHostile;
  child.component = "ns::Tpl<\"q\">";
  child.eoi = 1;
  child.ess = 1;
  child.tin = 10;
  child.tout = 20;
  Trace t;
  t.trace_id = 1;
  t.executions = {root, child};
  return t;
}

// The raw hostile text never appears; with full labels its escaped form does.
void expect_no_raw_injection(const std::string& dot, bool full_labels) {
  EXPECT_EQ(dot.find("evil\"op"), std::string::npos);
  EXPECT_EQ(dot.find("h\"ost"), std::string::npos);
  EXPECT_NE(dot.find("h\\\"ost"), std::string::npos);
  if (full_labels) {
    EXPECT_NE(dot.find("evil\\\"op\\\\N\\n</text><script>"), std::string::npos);
  }
}

TEST(GraphDot, HostileNamesAreEscapedInBothGraphs) {
  for (bool short_labels : {true, false}) {
    DotOptions o;
    o.short_labels = short_labels;
    AggregatedCallTree tree(AggregationLevel::kDeployment);
    tree.add(hostile_trace());
    DependencyGraph graph(AggregationLevel::kDeployment);
    graph.add(hostile_trace());
    const std::string t = to_dot(tree, o);
    const std::string g = to_dot(graph, o);
    expect_no_raw_injection(t, !short_labels);
    expect_no_raw_injection(g, !short_labels);
    EXPECT_NE(t.find("digraph G {"), std::string::npos);
    EXPECT_NE(g.find("n1 -> n2 [label=\"1\""), std::string::npos);
  }
}

TEST(GraphDot, DependencyGraphClustersByHostAndComponent) {
  Trace t = hostile_trace();
  t.executions[1].operation = "x.Y.get()";
  t.executions[1].component = "x.Y";
  DependencyGraph graph(AggregationLevel::kDeployment);
  graph.add(t);
  const std::string dot = to_dot(graph);
  EXPECT_NE(dot.find("subgraph cluster_h0 {"), std::string::npos);
  EXPECT_NE(dot.find("\"<<execution container>>\\nh\\\"ost\""), std::string::npos);
  EXPECT_NE(dot.find("\"<<deployment component>>\\nY\""), std::string::npos);
  EXPECT_NE(dot.find("get()\\n1 call, mean 10 ns"), std::string::npos);
  EXPECT_NE(dot.find("n0 -> n1 [label=\"1\""), std::string::npos);
}

bool have_dot() { return !find_executable("dot").empty(); }

TEST(GraphvizRender, HostileNamesRenderToSafeSvg) {
  if (!have_dot()) GTEST_SKIP() << "Graphviz 'dot' is not installed";
  DependencyGraph graph(AggregationLevel::kDeployment);
  graph.add(hostile_trace());
  DotOptions o;
  o.short_labels = false;
  const RenderResult r = render_dot(to_dot(graph, o), "svg");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.output.find("<svg"), std::string::npos);
  EXPECT_EQ(r.output.find("<script>"), std::string::npos);
  EXPECT_NE(r.output.find("&lt;script&gt;"), std::string::npos);
  // "\N" stayed literal text instead of becoming Graphviz's node-name escape.
  EXPECT_NE(r.output.find("evil&quot;op\\N"), std::string::npos);
}

TEST(GraphvizRender, LargeGraphsDoNotDeadlockThePipes) {
  if (!have_dot()) GTEST_SKIP() << "Graphviz 'dot' is not installed";
  std::string dot = "digraph G {\n";
  for (int i = 0; i < 3000; ++i) {
    dot += " n" + std::to_string(i) + " -> n" + std::to_string(i + 1) + ";\n";
  }
  dot += "}\n";
  const RenderResult r = render_dot(dot, "svg");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GT(r.output.size(), dot.size());
}

TEST(GraphvizRender, AProgramThatNeverFinishesIsStoppedAtTheTimeout) {
  // Stands in for dot on a graph too large to lay out: it never answers.
  const std::string script =
      (std::filesystem::temp_directory_path() / ("sonde-slow-dot-" + std::to_string(::getpid())))
          .string();
  std::ofstream(script) << "#!/bin/sh\nexec sleep 30\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const RenderResult r = render_dot("digraph G { a -> b }", "svg", script, 300);
  std::filesystem::remove(script);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("did not finish within 300 ms"), std::string::npos) << r.error;
  EXPECT_TRUE(r.output.empty());
}

TEST(GraphvizRender, ClearErrors) {
  RenderResult r = render_dot("digraph G {}", "svg", "/nonexistent/dot");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("graphviz"), std::string::npos) << r.error;
  r = render_dot("digraph G {}", "svg", "no-such-graphviz-program-xyz");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no-such-graphviz-program-xyz"), std::string::npos) << r.error;
  r = render_dot("digraph G {}", "svg; rm -rf /");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("invalid Graphviz output format"), std::string::npos);
  if (!have_dot()) return;
  r = render_dot("this is { not dot", "svg");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("failed (exit status"), std::string::npos) << r.error;
  EXPECT_TRUE(r.output.empty());
  // A program that exits at once without reading: EPIPE, not SIGPIPE death.
  r = render_dot(std::string(1 << 20, 'x'), "svg", "/bin/false");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("exit status 1"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace sonde::analysis
