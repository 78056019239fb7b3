// Names come from the monitored program and may contain anything. Every
// Kieker-format output must stay well-formed with quotes, backslashes,
// newlines, markup characters and invalid UTF-8 in host, component,
// operation and session names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "analysis/kieker/execution_trace_text.hpp"
#include "analysis/kieker/sequence_diagram_pic.hpp"
#include "analysis/kieker/sequence_diagram_svg.hpp"
#include "analysis/kieker/system_model_html.hpp"
#include "analysis/render/graphviz_render.hpp"
#include "kieker/kieker_parity_support.hpp"

namespace sonde::analysis {
namespace {

using namespace parity;

const std::string kHost = "srv\"1\\\n<&>\xff";
const std::string kComponent = "evil.\"Co\\mp\n<script>&amp;";
const std::string kCaller = "public void evil.\"Co\\mp\n<script>&amp;.run\"\\\n<b>&(int)";
const std::string kCallee = "int evil.\"Co\\mp\n<script>&amp;.get\x01</text>()";
const std::string kSession = "se\"ss\\ion\n";

Trace hostile_trace() {
  Trace t;
  t.trace_id = 42;
  t.origin = TraceOrigin::kExecutionRecords;
  t.session = kSession;
  const auto exec = [](std::string_view op, std::string_view host, int32_t eoi, int32_t ess,
                       int64_t tin, int64_t tout) {
    Execution e;
    e.operation = op;
    e.component = kComponent;
    e.host = host;
    e.eoi = eoi;
    e.ess = ess;
    e.tin = tin;
    e.tout = tout;
    return e;
  };
  t.executions = {exec(kCaller, kHost, 0, 0, 100, 900), exec(kCallee, "plain", 1, 1, 200, 300),
                  exec(kCallee, kHost, 2, 1, 400, 500)};
  return t;
}

std::map<std::string, std::string> all_outputs(bool short_labels) {
  KiekerOutputOptions o;
  o.execution_traces = o.message_traces = true;
  o.deployment_sequence_diagrams = o.assembly_sequence_diagrams = o.sequence_diagram_svg = true;
  o.call_trees = o.aggregated_deployment_call_tree = o.aggregated_assembly_call_tree = true;
  o.deployment_equivalence_classes = o.assembly_equivalence_classes = true;
  o.system_model = true;
  for (GraphRequest* g :
       {&o.container_graph, &o.assembly_component_graph, &o.deployment_component_graph,
        &o.assembly_operation_graph, &o.deployment_operation_graph}) {
    g->enabled = true;
    g->response_times = TimeUnit::kNanoseconds;
  }
  o.include_self_loops = true;
  o.short_labels = short_labels;
  MemoryFiles files;
  KiekerSystemModel model;
  KiekerTraceAnalysis outputs(o, model, files);
  const Trace t = hostile_trace();
  outputs.on_trace(t);
  outputs.finish();
  EXPECT_TRUE(outputs.failed_files().empty());
  return files.files;
}

// A DOT file is safe when every quoted string ends on its own line (a raw
// newline inside quotes, or an unbalanced quote, means a name broke out).
void expect_dot_strings_closed(const std::string& name, const std::string& dot) {
  for (const std::string& line : lines_of(dot)) {
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (quoted && line[i] == '\\') {
        ++i;  // an escaped character
      } else if (line[i] == '"') {
        quoted = !quoted;
      }
    }
    EXPECT_FALSE(quoted) << name << ": " << line;
  }
}

TEST(KiekerParityHostile, DotOutputsStayWellFormed) {
  for (bool short_labels : {false, true}) {
    const auto files = all_outputs(short_labels);
    size_t dots = 0;
    for (const auto& [name, text] : files) {
      if (!name.ends_with(".dot")) continue;
      ++dots;
      expect_dot_strings_closed(name, text);
      EXPECT_EQ(text.find('\xff'), std::string::npos) << name;
      EXPECT_EQ(text.find('\x01'), std::string::npos) << name;
      if (find_executable("dot").empty()) continue;
      const RenderResult r = render_dot(text, "svg");
      EXPECT_TRUE(r.ok) << name << ": " << r.error << "\n" << text;
    }
    EXPECT_EQ(dots, 8u);  // 1 call tree, 2 aggregated, 5 dependency graphs
  }
}

TEST(KiekerParityHostile, TextOutputsKeepOneLinePerEntry) {
  const auto files = all_outputs(true);
  // Header + 3 executions + the blank line after the trace.
  EXPECT_EQ(lines_of(files.at("executionTraces.txt")).size(), 5u);
  // Header + 3 calls + 3 replies + blank.
  EXPECT_EQ(lines_of(files.at("messageTraces.txt")).size(), 8u);
  const std::string& text = files.at("executionTraces.txt");
  EXPECT_NE(text.find("srv\"1\\\\\\n<&>\\xff::@1:evil.\"Co\\\\mp\\n<script>&amp;."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" se\"ss\\\\ion\\n>"), std::string::npos) << text;
  EXPECT_EQ(text_escape("a\tb\x7f"), "a\\tb\\x7f");
  EXPECT_EQ(text_escape("caf\xc3\xa9"), "caf\xc3\xa9");  // valid UTF-8 stays
}

TEST(KiekerParityHostile, PicStringsAreEscaped) {
  EXPECT_EQ(pic_quote("a\"b\\c\nd\xff"), "\"a\\\"b\\\\c?d?\"");
  const auto files = all_outputs(false);
  for (const char* name : {"deploymentSequenceDiagram-42.pic", "assemblySequenceDiagram-42.pic"}) {
    const std::string& pic = files.at(name);
    for (const std::string& line : lines_of(pic)) {
      if (!line.starts_with("object(") && !line.starts_with("message(")) continue;
      EXPECT_TRUE(line.ends_with(");")) << name << ": " << line;  // no name broke the line
    }
    if (::access("/usr/bin/gpic", X_OK) != 0) continue;
    const fs::path file =
        fs::temp_directory_path() / ("sonde-hostile-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(file, std::ios::binary) << pic;
    const int rc = std::system(("/usr/bin/gpic '" + file.string() + "' > /dev/null").c_str());
    EXPECT_EQ(rc, 0) << name;
    fs::remove(file);
  }
}

TEST(KiekerParityHostile, SvgEscapesEveryName) {
  const auto files = all_outputs(false);
  for (const char* name : {"deploymentSequenceDiagram-42.svg", "assemblySequenceDiagram-42.svg"}) {
    const std::string& svg = files.at(name);
    EXPECT_EQ(svg.find("<script>"), std::string::npos) << name;
    EXPECT_EQ(svg.find("<b>"), std::string::npos) << name;
    EXPECT_EQ(svg.find("</text>()"), std::string::npos) << name;
    EXPECT_NE(svg.find("&lt;script&gt;&amp;amp;"), std::string::npos) << name;
    // Every element that opens closes: as many '<' as '>' once text is escaped.
    size_t open = 0;
    size_t close = 0;
    for (char c : svg) {
      open += c == '<';
      close += c == '>';
    }
    EXPECT_EQ(open, close) << name;
  }
  // Control characters are not allowed in XML 1.0 at all: they become spaces.
  EXPECT_EQ(xml_escape("<a href='x'>\"&\"</a>\x02"),
            "&lt;a href=&apos;x&apos;&gt;&quot;&amp;&quot;&lt;/a&gt; ");
}

TEST(KiekerParityHostile, HtmlEscapesEveryName) {
  const std::string html = all_outputs(false).at("system-entities.html");
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("</text>"), std::string::npos);
  EXPECT_EQ(html.find('\xff'), std::string::npos);
  // Newlines stay (whitespace in HTML), other control characters become
  // spaces (xml_escape.hpp).
  EXPECT_NE(html.find("evil.&quot;Co\\mp\n&lt;script&gt;&amp;amp;"), std::string::npos) << html;
  EXPECT_EQ(html_escape("a/'<\x01"), "a/&apos;&lt; ");
}

}  // namespace
}  // namespace sonde::analysis
