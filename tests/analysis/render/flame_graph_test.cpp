// Flame graphs: stacks merged across traces, folded output whose values sum
// to the exclusive times, continued parts grafted under their caller, the
// focus filter, hostile names (folded separators, XML escaping), the SVG's
// structure (well-formed XML, one rect per frame, widths by total time), and
// a real Kieker log end to end.
#include "analysis/render/flame_graph.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/export/export_support.hpp"
#include "analysis/model/call_tree.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/render/flame_graph_svg.hpp"
#include "export/export_fixtures.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis {
namespace {

namespace fs = std::filesystem;
using test::exec;
using test::kT0;
using test::make_trace;

std::map<std::string, int64_t> folded_lines(const FlameGraph& graph,
                                            size_t max_depth = FlameGraph::kDefaultFoldedDepth) {
  std::ostringstream out;
  graph.write_folded(out, max_depth);
  std::map<std::string, int64_t> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    EXPECT_TRUE(lines.emplace(line.substr(0, space), std::stoll(line.substr(space + 1))).second)
        << "stack printed twice: " << line;
  }
  return lines;
}

int64_t sum_of(const std::map<std::string, int64_t>& lines) {
  int64_t sum = 0;
  for (const auto& [stack, value] : lines) sum += value;
  return sum;
}

int64_t exclusive_sum(const Trace& t) {
  int64_t sum = 0;
  for (int64_t v : exclusive_durations(t, build_call_tree(t))) sum += std::max<int64_t>(v, 0);
  return sum;
}

std::string svg_of(const FlameGraph& graph, const FlameGraphSvgOptions& options = {}) {
  std::ostringstream out;
  write_flame_graph_svg(graph, out, options);
  return out.str();
}

// Well-formedness: xmllint when installed, else a tag-balance check.
void expect_well_formed_xml(const std::string& xml) {
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    const fs::path file =
        fs::temp_directory_path() / ("sonde-flame-" + std::to_string(::getpid()) + ".svg");
    std::ofstream(file, std::ios::binary) << xml;
    const std::string command = "xmllint --noout '" + file.string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << "xmllint rejects:\n" << xml.substr(0, 2000);
    fs::remove(file);
    return;
  }
  const std::string body = std::regex_replace(xml, std::regex(R"(<!\[CDATA\[[\s\S]*?\]\]>)"), "");
  std::vector<std::string> open;
  const std::regex tag(R"(<(/?)([A-Za-z][\w:-]*)[^>]*?(/?)>)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    if (m[1] == "/") {
      ASSERT_FALSE(open.empty()) << "unbalanced </" << m[2] << ">";
      ASSERT_EQ(open.back(), m[2]);
      open.pop_back();
    } else if (m[3] != "/") {
      open.push_back(m[2]);
    }
  }
  EXPECT_TRUE(open.empty());
}

TEST(FlameGraph, FoldedValuesAreExclusiveTimesAndSumToTheirTotal) {
  const Trace t = test::sample_trace();
  FlameGraph graph;
  graph.add(t);
  const std::map<std::string, int64_t> lines = folded_lines(graph);
  // main 1000 - 300 - 400 = 300; handle 300 - 100 = 200; submit 400 - 100 = 300.
  const std::map<std::string, int64_t> expected = {
      {"Main.main(..)", 300},
      {"Main.main(..);Svc.handle(..)", 200},
      {"Main.main(..);Svc.handle(..);Dao.query(..)", 100},
      {"Main.main(..);Svc.submit()", 300},
      {"Main.main(..);Svc.submit();Dao.query(..)", 100}};
  EXPECT_EQ(lines, expected);
  EXPECT_EQ(sum_of(lines), exclusive_sum(t));
  EXPECT_EQ(graph.total(), 1000);
}

TEST(FlameGraph, DeepStacksAreFoldedBelowTheDepthLimitKeepingEveryNanosecond) {
  // A recursion 5,000 deep, 1 ns of self time per level on each side.
  constexpr int kDepth = 5000;
  Trace t;
  t.trace_id = 1;
  for (int i = 0; i < kDepth; ++i) {
    Execution x;
    x.operation = "R.f()";
    x.component = "R";
    x.tin = i;
    x.tout = 2 * kDepth - i;
    x.eoi = i;
    x.ess = i;
    t.executions.push_back(x);
  }
  FlameGraph graph;
  graph.add(t);
  const auto lines = folded_lines(graph, 10);
  // Ten lines for depths 1..10, one for everything below.
  EXPECT_EQ(lines.size(), 11u);
  EXPECT_EQ(sum_of(lines), exclusive_sum(t));
  std::string tenth;
  for (int i = 0; i < 10; ++i) tenth += (i ? ";" : "") + std::string("R.f()");
  ASSERT_EQ(lines.count(tenth + ";[deeper frames folded]"), 1u);
  EXPECT_EQ(lines.at(tenth + ";[deeper frames folded]"), exclusive_sum(t) - 10 * 2);
  // The default limit keeps stacks of normal depth whole.
  EXPECT_EQ(folded_lines(graph).size(), FlameGraph::kDefaultFoldedDepth + 1);
}

TEST(FlameGraph, IdenticalStacksMergeSoMemoryFollowsDistinctStacks) {
  FlameGraph graph;
  for (int i = 0; i < 1000; ++i) graph.add(test::sample_trace(i));
  EXPECT_EQ(graph.frames().size(), 6u);  // root + 5 distinct stacks
  EXPECT_EQ(graph.traces(), 1000u);
  EXPECT_EQ(graph.total(), 1000 * 1000);
  const FlameFrame& main_frame = graph.frames()[graph.frames()[0].children[0]];
  EXPECT_EQ(graph.label(main_frame), "Main.main(..)");
  EXPECT_EQ(main_frame.calls, 1000u);
  EXPECT_EQ(main_frame.self, 300 * 1000);
  EXPECT_EQ(sum_of(folded_lines(graph)), 1000 * exclusive_sum(test::sample_trace()));
  // The query under submit failed every time; the one under handle never.
  for (const FlameFrame& f : graph.frames()) {
    if (graph.label(f) != "Dao.query(..)") continue;
    const std::string& caller = graph.label(graph.frames()[f.parent]);
    EXPECT_EQ(f.failed, caller == "Svc.submit()" ? 1000u : 0u);
  }
}

TEST(FlameGraph, ContinuedPartsGrowUnderTheirCallerOrStandAlone) {
  const StitchedTrace s = test::stitched_sample();
  FlameGraph grafted;
  grafted.add(s);
  const std::map<std::string, int64_t> g = folded_lines(grafted);
  EXPECT_EQ(g.at("Main.main(..);Svc.submit();Worker.run()"), 200);  // 300 - step 100
  // A grafted part ran on another thread: it does not reduce its caller's self time.
  EXPECT_EQ(g.at("Main.main(..);Svc.submit();Worker.run();Worker.step()"), 100);
  EXPECT_EQ(g.at("Main.main(..);Svc.submit();Worker.run();Worker.step();Api.serve()"), 80);
  EXPECT_EQ(grafted.total(), 1000 + 300 + 80);  // thread time of all parts

  FlameGraphOptions separate;
  separate.graft_continued_parts = false;
  FlameGraph apart(separate);
  apart.add(s);
  const std::map<std::string, int64_t> a = folded_lines(apart);
  EXPECT_EQ(a.at("Worker.run()"), 200);
  EXPECT_EQ(a.at("Api.serve()"), 80);
  EXPECT_EQ(sum_of(a), sum_of(g));
}

TEST(FlameGraph, FocusKeepsOnlyTimeInMatchingFramesAndTheirCallees) {
  FlameGraphOptions options;
  options.focus = "handle";
  FlameGraph graph(options);
  graph.add(test::sample_trace());
  const std::map<std::string, int64_t> expected = {
      {"Main.main(..);Svc.handle(..)", 200}, {"Main.main(..);Svc.handle(..);Dao.query(..)", 100}};
  EXPECT_EQ(folded_lines(graph), expected);
  EXPECT_EQ(graph.total(), 300);
  EXPECT_EQ(graph.frames().size(), 4u);  // root, main, handle, query: submit left out
}

TEST(FlameGraph, NegativeExclusiveTimesCountAsZero) {
  // Operations in Kieker's form. Skew: the callee seems longer than its caller.
  FlameGraph graph;
  graph.add(make_trace(
      1, 1,
      {exec("C.a()", "C", kT0, kT0 + 100, 0, 0), exec("C.b()", "C", kT0 + 10, kT0 + 150, 1, 1)}));
  EXPECT_EQ(folded_lines(graph).size(), 1u);
  EXPECT_EQ(folded_lines(graph).at("C.a();C.b()"), 140);
  EXPECT_EQ(graph.total(), 140);
}

TEST(FlameGraph, HostileNamesCannotBreakTheFoldedFormatOrTheSvg) {
  const std::string evil =
      "a;b\nc\rd\te <script>alert('x')</script> & \"q\" ]]> \x01\x7f \xff\xfe\xef\xbf\xbe";
  FlameGraphOptions options;
  options.short_labels = false;
  FlameGraph graph(options);
  graph.add(make_trace(
      1, 1, {exec(evil, evil, kT0, kT0 + 100, 0, 0), exec("ok()", "C", kT0 + 10, kT0 + 20, 1, 1)}));
  std::ostringstream folded;
  graph.write_folded(folded);
  const std::string expected_label =
      "a:b c d e <script>alert('x')</script> & \"q\" ]]>    \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBE";
  EXPECT_EQ(folded.str(), expected_label + " 90\n" + expected_label + ";ok() 10\n");

  FlameGraphSvgOptions svg_options;
  svg_options.title = evil;
  svg_options.subtitle = "</text><script>alert(1)</script>";
  const std::string svg = svg_of(graph, svg_options);
  expect_well_formed_xml(svg);
  EXPECT_EQ(svg.find("<script>alert"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;q&quot;"),
            std::string::npos);
  EXPECT_NE(svg.find("&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("\xEF\xBF\xBE"), std::string::npos) << "U+FFFE is no XML character";
  // The only CDATA section is the script's.
  EXPECT_EQ(svg.find("]]>"), svg.rfind("]]>"));
}

TEST(FlameGraph, SvgHasOneFramePerShownStackWithWidthsByTotalTime) {
  FlameGraph graph;
  graph.add(test::sample_trace());
  const std::string svg = svg_of(graph);
  expect_well_formed_xml(svg);
  const std::regex frame_re(
      R"re(<g class="frame"><title>([^<\n]*)\n[^<]*</title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)")re");
  std::map<std::string, std::vector<double>> frames;  // label -> widths
  std::map<std::string, double> y_of;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame_re);
       it != std::sregex_iterator(); ++it) {
    frames[(*it)[1]].push_back(std::stod((*it)[4]));
    y_of[(*it)[1]] = std::stod((*it)[3]);
  }
  EXPECT_EQ(frames["all"].size(), 1u);
  EXPECT_EQ(frames["Main.main(..)"].size(), 1u);
  EXPECT_EQ(frames["Dao.query(..)"].size(), 2u);
  EXPECT_DOUBLE_EQ(frames["all"][0], 1180.0);
  EXPECT_NEAR(frames["Svc.submit()"][0], 1180.0 * 400 / 1000, 0.01);
  EXPECT_NEAR(frames["Svc.handle(..)"][0], 1180.0 * 300 / 1000, 0.01);
  EXPECT_GT(y_of["all"], y_of["Main.main(..)"]);  // flame: the root at the bottom
  EXPECT_NE(svg.find("calls: 1 (1 failed)"), std::string::npos);
  EXPECT_NE(svg.find("self: 300 ns"), std::string::npos);
  EXPECT_NE(svg.find("<script"), std::string::npos);

  FlameGraphSvgOptions icicle;
  icicle.icicle = true;
  icicle.interactive = false;
  const std::string top_down = svg_of(graph, icicle);
  expect_well_formed_xml(top_down);
  EXPECT_EQ(top_down.find("<script"), std::string::npos);
  const std::smatch first = [&] {
    std::smatch m;
    std::regex_search(top_down, m, frame_re);
    return m;
  }();
  EXPECT_EQ(first[1], "all");
  EXPECT_LT(std::stod(first[3]), y_of["all"]);  // icicle: the root on top

  FlameGraphSvgOptions narrow;
  narrow.min_width_px = 400;  // only frames at least a third of the width
  const std::string pruned = svg_of(graph, narrow);
  EXPECT_EQ(pruned.find("Dao.query"), std::string::npos);
  EXPECT_NE(pruned.find("Svc.submit()"), std::string::npos);
}

TEST(FlameGraph, ShortLabelsKeepTheSeparatorOfTheLanguage) {
  FlameGraph graph;
  graph.add(make_trace(
      1, 1,
      {exec("int ns::Tpl<int, char>::name(int) const", "ns::Tpl<int, char>", kT0, kT0 + 10, 0, 0),
       exec("public static void a.b.Main.main(java.lang.String[])", "a.b.Main", kT0 + 1, kT0 + 2, 1,
            1),
       exec("free_function()", "", kT0 + 3, kT0 + 4, 2, 1)}));
  const std::map<std::string, int64_t> expected = {{"Tpl<int, char>::name(..)", 8},
                                                   {"Tpl<int, char>::name(..);Main.main(..)", 1},
                                                   {"Tpl<int, char>::name(..);free_function()", 1}};
  EXPECT_EQ(folded_lines(graph), expected);
}

TEST(FlameGraph, EmptyGraphStillDrawsAValidSvg) {
  FlameGraph graph;
  const std::string svg = svg_of(graph);
  expect_well_formed_xml(svg);
  std::ostringstream folded;
  graph.write_folded(folded);
  EXPECT_TRUE(folded.str().empty());
}

// Sums every valid trace's exclusive times independently of the flame graph.
class ExclusiveTimeSum : public TraceSink {
 public:
  void on_trace(const Trace& t) override { sum += exclusive_sum(t); }
  void on_invalid_trace(const InvalidTrace&) override {}
  int64_t sum = 0;
};

TEST(FlameGraph, KiekerBookstoreLogEndToEnd) {
  const std::string log = std::string(SONDE_TESTDATA_DIR) + "/kieker/bookstore-oer-2010/log";
  FlameGraph graph;
  OnePartStitchedTraceSink one_part(graph);
  ExclusiveTimeSum expected;
  AnalysisOptions options;
  options.build_dependency_graph = false;
  TraceAnalysis analysis(options);
  analysis.add_sink(one_part);
  analysis.add_sink(expected);
  const format::LogReadStats read = format::read_log(log, analysis.records());
  const AnalysisResult result = analysis.finish();
  ASSERT_TRUE(read.ok);
  ASSERT_GT(result.traces.valid, 0u);
  EXPECT_EQ(graph.traces(), result.traces.valid);
  EXPECT_EQ(sum_of(folded_lines(graph)), expected.sum);
  // One frame per node of Kieker's aggregated (deployment) call tree at most,
  // since labels merge what hosts keep apart.
  EXPECT_LE(graph.frames().size(), result.call_tree->nodes().size());
  expect_well_formed_xml(svg_of(graph));
}

}  // namespace
}  // namespace sonde::analysis
