// A trace 100,000 calls deep (30,000 under the sanitizers, below) through every analysis output of
// the CLI (issue 8, hostile input: deep recursion must not overflow the analysis' stack). The log
// is a Kieker filesystem log written here the way Kieker writes OperationExecutionRecords: at exit,
// so the deepest call first and the root last. A small second trace checks that the deep one does
// not disturb its neighbours.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "json_counts.hpp"
#include "sonde_cli_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using sonde::test::CliRun;
using sonde::test::slurp;

// 30,000 levels under the sanitizers, whose build is -O0 with ASan's
// redzones: a frame there is several times the release build's, so a
// recursive walk still overflows the 8 MiB stack at 30,000 levels (checked
// with a tree walk that keeps a std::string per frame: it overflowed at
// 30,000 under ASan -O0 and at 100,000, not 30,000, at -O2),
// and the test costs 70 s of CI's time instead of 230 s (2026-11-29).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kDeepCalls = 30000;
#else
constexpr int kDeepCalls = 100000;
#endif
constexpr int kShallowExecutions = 3;  // run() calling step() twice
constexpr int kShallowOperations = 2;  // run, step

class DeepTraceCli : public sonde::test::SondeCli {
 protected:
  void SetUp() override {
    SondeCli::SetUp();
    log_ = dir_ / "log";
    fs::create_directories(log_);
    std::ofstream(log_ / "kieker.map")
        << "$1=kieker.common.record.controlflow.OperationExecutionRecord\n";
    std::ofstream dat(log_ / "kieker-20260101-000000000-UTC-001.dat");
    dat << "$1;30;app.Main.step();N/A;2;20;30;host;1;1\n"
        << "$1;50;app.Main.step();N/A;2;40;50;host;2;1\n"
        << "$1;100;app.Main.run();N/A;2;10;100;host;0;0\n";
    for (int level = kDeepCalls - 1; level >= 0; --level) {
      const int64_t tin = 1000 + level;
      const int64_t tout = 1000 + 2 * int64_t{kDeepCalls} - level;
      dat << "$1;" << tout << ";deep.Recursive.level(int);N/A;1;" << tin << ";" << tout << ";host;"
          << level << ";" << level << "\n";
    }
  }

  // `sonde traces FILE --summary --json`, parsed; the run must succeed.
  nlohmann::json trace_summary(const fs::path& file) {
    const CliRun r = sonde({"traces", file.string(), "--summary", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }

  fs::path log_;
};

TEST_F(DeepTraceCli, ReconstructionAndStatisticsCountEveryLevel) {
  const nlohmann::json summary = trace_summary(log_);
  EXPECT_EQ(summary["records"].get<int>(), kDeepCalls + kShallowExecutions);
  EXPECT_EQ(summary["traces"].get<int>(), 2);
  EXPECT_EQ(summary["invalid_traces"].get<int>(), 0);

  const CliRun stats = sonde({"summary", log_.string(), "--format", "json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const nlohmann::json doc = nlohmann::json::parse(stats.out);
  int deep_count = -1;
  for (const nlohmann::json& op : doc["operations"]) {
    if (op["component"] == "deep.Recursive") deep_count = op["count"].get<int>();
  }
  EXPECT_EQ(deep_count, kDeepCalls);

  const CliRun shown = sonde({"traces", log_.string(), "--show", "1"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find(std::to_string(kDeepCalls) + " executions"), std::string::npos);
}

TEST_F(DeepTraceCli, CallTreeHasANodePerLevelAndIsNotSentToGraphviz) {
  const fs::path json = dir_ / "calltree.json";
  const CliRun tree = sonde({"graph", log_.string(), "--kind", "calltree", "--out", json.string()});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  // The entry node, one node per deep level, and the shallow trace's two.
  EXPECT_EQ(doc["nodes"].size(), size_t{1} + kDeepCalls + kShallowOperations);

  const CliRun dot = sonde(
      {"graph", log_.string(), "--kind", "calltree", "--out", (dir_ / "calltree.dot").string()});
  EXPECT_EQ(dot.exit_code, 0) << dot.err;

  // Graphviz would need far longer than anyone waits: refused at once, by name.
  const fs::path svg = dir_ / "calltree.svg";
  const CliRun rendered =
      sonde({"graph", log_.string(), "--kind", "calltree", "--out", svg.string()});
  EXPECT_EQ(rendered.exit_code, 1);
  EXPECT_NE(rendered.err.find("the graph has " +
                              std::to_string(1 + kDeepCalls + kShallowOperations) + " nodes"),
            std::string::npos)
      << rendered.err;
  EXPECT_FALSE(fs::exists(svg));

  const CliRun deps = sonde(
      {"graph", log_.string(), "--kind", "dependency", "--out", (dir_ / "deps.svg").string()});
  EXPECT_EQ(deps.exit_code, 0) << deps.err;
}

TEST_F(DeepTraceCli, FlameGraphFoldsTheDepthAndRenders) {
  const fs::path folded = dir_ / "deep.folded";
  const CliRun f = sonde({"flame", log_.string(), "--out", folded.string()});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(slurp(folded).find("[deeper frames folded]"), std::string::npos);
  const CliRun svg = sonde({"flame", log_.string(), "--out", (dir_ / "deep.svg").string()});
  EXPECT_EQ(svg.exit_code, 0) << svg.err;
}

TEST_F(DeepTraceCli, ExportsRoundTripWithEveryExecution) {
  for (const char* format : {"native", "openxtrace", "kieker-bin"}) {
    const fs::path out = dir_ / (std::string("deep-") + format +
                                 (std::string(format) == "native"       ? ".sonde"
                                  : std::string(format) == "openxtrace" ? ".json"
                                                                        : ""));
    const CliRun c = sonde({"convert", log_.string(), "--to", format, out.string()});
    ASSERT_EQ(c.exit_code, 0) << format << ": " << c.err;
    const nlohmann::json back = trace_summary(out);
    EXPECT_EQ(back["traces"].get<int>(), 2) << format;
    EXPECT_EQ(back["invalid_traces"].get<int>(), 0) << format;
    EXPECT_TRUE(back["errors"].empty()) << format << ": " << back["errors"].dump();
  }
  // Chrome: one complete ("X") event per execution.
  const fs::path chrome = dir_ / "deep-chrome.json";
  const CliRun c = sonde({"convert", log_.string(), "--to", "chrome", chrome.string()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(sonde::test::count_json_elements(chrome, "traceEvents", "ph", "X", false),
            size_t{kDeepCalls} + kShallowExecutions);

  // OTLP: JSON lines (one export request per line), one span per execution.
  const fs::path otlp = dir_ / "deep-otlp.json";
  const CliRun o = sonde({"convert", log_.string(), "--to", "otlp", otlp.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(sonde::test::count_json_elements(otlp, "spans", "spanId", "", true),
            size_t{kDeepCalls} + kShallowExecutions);
}

TEST_F(DeepTraceCli, KiekerTraceAnalysisWritesEveryOutput) {
  const CliRun r =
      sonde({"trace-analysis", log_.string(), "--out", (dir_ / "ta").string(), "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Traces: 2 valid, 0 invalid"), std::string::npos) << r.out;
  const std::string executions = slurp(dir_ / "ta" / "executionTraces.txt");
  size_t deep_lines = 0;
  for (size_t at = executions.find("deep.Recursive"); at != std::string::npos;
       at = executions.find("deep.Recursive", at + 1)) {
    ++deep_lines;
  }
  EXPECT_EQ(deep_lines, size_t{kDeepCalls});
}

// One stack and one trace context per level under a single caller context:
// the calling-context tree's operators once scanned all siblings per leaf,
// which took a minute here.
TEST_F(DeepTraceCli, ContextModelHasAStackContextPerLevel) {
  const CliRun r = sonde({"context", log_.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> level;
  for (const nlohmann::json& l : doc["levels"]) level[l["level"].get<std::string>()] = l;
  // deep.level, run, step; callers level<-$, level<-level, run<-$, step<-run.
  EXPECT_EQ(level["operation"]["contexts"].get<int>(), 3);
  EXPECT_EQ(level["caller"]["contexts"].get<int>(), 4);
  EXPECT_EQ(level["stack"]["contexts"].get<int>(), kDeepCalls + 2);
  EXPECT_EQ(level["trace"]["contexts"].get<int>(), kDeepCalls + kShallowExecutions);
  // Leaves: run (operation), level<-$ (caller), the stack contexts below
  // level<-level, and step's two trace positions.
  EXPECT_EQ(level["model"]["leaves"].get<int>(), 1 + 1 + (kDeepCalls - 1) + 2);
}

}  // namespace
