// Runs the built `sonde trace-analysis` on the Kieker test logs with the
// options of Kieker's own runs (HOW-GENERATED.txt), and on bad input:
// exit status (0 ok, 1 input unreadable or output unwritable, 2 usage) and
// error messages that name the file. Golden files are Kieker's own.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sonde_cli_fixture.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kKieker = fs::path(SONDE_TESTDATA_DIR) / "kieker";
const fs::path kTraceAnalysisBookstore = kKieker / "bookstore-oer-2010";

using sonde::test::CliRun;
using sonde::test::slurp;

class TraceAnalysisCli : public sonde::test::SondeCli {
 protected:
  // sonde trace-analysis ARGS...
  CliRun sonde(std::vector<std::string> args) {
    args.insert(args.begin(), "trace-analysis");
    return SondeCli::sonde(std::move(args));
  }
};

TEST_F(TraceAnalysisCli, SelectedTracesAsKiekersThirdRun) {
  const fs::path out = dir_ / "out";
  const CliRun r =
      sonde({(kTraceAnalysisBookstore / "log").string(), "--out", out.string(), "--select-traces",
             "6488138950668976141", "6488138950668976129", "6488138950668976130",
             "6488138950668976131", "--plot-Deployment-Sequence-Diagrams",
             "--plot-Assembly-Sequence-Diagrams", "--plot-Call-Trees", "--print-Message-Traces",
             "--print-Execution-Traces", "--short-labels"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Traces: 4 valid, 0 invalid"), std::string::npos) << r.out;
  const fs::path golden = kTraceAnalysisBookstore / "kieker-trace-analysis-output";
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    ++files;
    const std::string name = entry.path().filename().string();
    ASSERT_TRUE(fs::exists(golden / name)) << name;
    // The .pic files differ in their macro definitions only (tested in analysis_tests).
    if (!name.ends_with(".pic")) {
      EXPECT_EQ(slurp(entry.path()), slurp(golden / name)) << name;
    }
  }
  EXPECT_EQ(files, 2u + 4 * 3);  // two text files; per trace two diagrams and a call tree
}

TEST_F(TraceAnalysisCli, GraphsWithPrefixDecorationsAndSvg) {
  const fs::path out = dir_ / "out";
  const std::vector<std::string> args = {(kKieker / "events-2014" / "log").string(),
                                         "--out",
                                         out.string(),
                                         "-p",
                                         "responseTime-",
                                         "--plot-Deployment-Component-Dependency-Graph",
                                         "responseTimes-ms",
                                         "--plot-assembly-operation-dependency-graph",
                                         "--response-times",
                                         "us",
                                         "--plot-Container-Dependency-Graph",
                                         "--plot-aggregated-assembly-call-tree",
                                         "--plot-assembly-sequence-diagrams",
                                         "--svg"};
  const CliRun r = sonde(args);
  if (::access("/usr/bin/dot", X_OK) != 0 && r.exit_code == 1) {
    GTEST_SKIP() << "Graphviz 'dot' is not installed: " << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string component = slurp(out / "responseTime-deploymentComponentDependencyGraph.dot");
  EXPECT_NE(component.find("ms, avg: "), std::string::npos) << component;
  const std::string operation = slurp(out / "responseTime-assemblyOperationDependencyGraph.dot");
  EXPECT_NE(operation.find("us, avg: "), std::string::npos) << operation;
  for (const char* svg :
       {"responseTime-containerDependencyGraph.svg", "responseTime-aggregatedAssemblyCallTree.svg",
        "responseTime-assemblySequenceDiagram-3881283897249497089.svg"}) {
    EXPECT_NE(slurp(out / svg).find("<svg"), std::string::npos) << svg;
  }
}

TEST_F(TraceAnalysisCli, AllWritesEveryKiekerFile) {
  const fs::path out = dir_ / "all";
  const CliRun r = sonde({(kKieker / "events-2014" / "log").string(), "--out", out.string(),
                          "--all", "--short-labels"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f :
       {"executionTraces.txt", "messageTraces.txt", "traceDeploymentEquivClasses.txt",
        "traceAssemblyEquivClasses.txt", "aggregatedDeploymentCallTree.dot",
        "aggregatedAssemblyCallTree.dot", "containerDependencyGraph.dot",
        "assemblyComponentDependencyGraph.dot", "deploymentComponentDependencyGraph.dot",
        "assemblyOperationDependencyGraph.dot", "deploymentOperationDependencyGraph.dot",
        "callTree-3881283897249497088.dot", "deploymentSequenceDiagram-3881283897249497089.pic",
        "assemblySequenceDiagram-3881283897249497089.pic"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  EXPECT_EQ(
      slurp(out / "system-entities.html"),
      slurp(kKieker / "events-2014" / "kieker-trace-analysis-output" / "system-entities.html"));
  // Every golden file of this log (Kieker's first run) is written the same, up to line order.
  for (const auto& entry :
       fs::directory_iterator(kKieker / "events-2014" / "kieker-trace-analysis-output")) {
    if (entry.path().extension() != ".dot") continue;
    std::vector<std::string> want, got;
    std::istringstream a(slurp(entry.path())), b(slurp(out / entry.path().filename()));
    for (std::string l; std::getline(a, l);) want.push_back(l);
    for (std::string l; std::getline(b, l);) got.push_back(l);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << entry.path().filename();
  }
}

TEST_F(TraceAnalysisCli, MissingOrUnreadableLogExitsOneAndNamesIt) {
  const std::string missing = (dir_ / "no-such-log").string();
  CliRun r = sonde({missing, "--out", (dir_ / "o").string(), "--all"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;

  const fs::path garbage = dir_ / "garbage.sonde";
  std::ofstream(garbage) << "\x01\x02 this is not a log";
  r = sonde({garbage.string(), "--out", (dir_ / "o").string(), "--all"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(garbage.string()), std::string::npos) << r.err;

  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  std::ofstream(empty / "notes.txt") << "not a log\n";
  r = sonde({empty.string(), "--out", (dir_ / "o").string(), "--all"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(empty.string()), std::string::npos) << r.err;
}

TEST_F(TraceAnalysisCli, UnwritableOutputExitsOneAndNamesIt) {
  const fs::path file = dir_ / "a-file";
  std::ofstream(file) << "x";
  const CliRun r = sonde({(kKieker / "events-2014" / "log").string(), "--out",
                          (file / "sub").string(), "--print-execution-traces"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find((file / "sub").string()), std::string::npos) << r.err;
}

TEST_F(TraceAnalysisCli, UsageErrorsExitTwo) {
  const std::string log = (kKieker / "events-2014" / "log").string();
  const std::string out = (dir_ / "u").string();
  const std::vector<std::vector<std::string>> cases = {
      {},
      {log, "--all"},
      {log, "--out", out},
      {log, "--out", out, "--all", "--select-traces", "12x"},
      {log, "--out", out, "--plot-assembly-component-dependency-graph", "responseTimes-hours"},
      {log, "--out", out, "--all", "--response-times", "fortnights"},
      {log, "--out", out, "--all", "--prefix", "a/b"},
      {log, "--out", out, "--all", "--no-such-option"},
      {log, "--out", out, "--all", "--select-traces", "1", "--filter-traces", "2"},
  };
  for (const auto& args : cases) {
    const CliRun r = sonde(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << joined;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(TraceAnalysisCli, UnknownSelectedTraceIsAWarning) {
  const CliRun r =
      sonde({(kKieker / "events-2014" / "log").string(), "--out", (dir_ / "o").string(),
             "--select-traces", "3881283897249497088", "17", "--print-execution-traces"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("trace 17 listed but not in"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("Traces: 1 valid"), std::string::npos) << r.out;
}

TEST_F(TraceAnalysisCli, FilterTracesWithKiekersInputdirsSpelling) {
  const fs::path out = dir_ / "o";
  const CliRun r =
      sonde({"--inputdirs", (kKieker / "events-2014" / "log").string(), "--outputdir", out.string(),
             "--filter-traces", "3881283897249497088", "--print-Execution-Traces"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Traces: 1 valid"), std::string::npos) << r.out;
  const std::string text = slurp(out / "executionTraces.txt");
  EXPECT_EQ(text.find("TraceId 3881283897249497088"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("TraceId 3881283897249497089 ", 0), 0u) << text;
}

TEST_F(TraceAnalysisCli, JsonListsTheFilesWritten) {
  const fs::path out = dir_ / "out";
  const CliRun r = sonde({(kKieker / "events-2014" / "log").string(), "--out", out.string(),
                          "--plot-Aggregated-Deployment-Call-Tree", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["invalid_traces"].get<int>(), 0);
  EXPECT_GT(doc["traces"].get<int>(), 0);
  size_t on_disk = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    ++on_disk;
    const std::string name = entry.path().filename().string();
    EXPECT_NE(std::find(doc["files"].begin(), doc["files"].end(), name), doc["files"].end())
        << name;
  }
  EXPECT_EQ(doc["files"].size(), on_disk);
}

// A Kieker text log with call events, written here as Kieker's call probes
// write them (caller, then callee, signatures; a probe that finds no trace
// running starts one with the call): traces 1 and 2 have the shape of
// Kieker's validSyncTraceAdditionalCallEventsGap (CRM not instrumented),
// trace 3 begins with a call and holds only calls, trace 4 begins with a
// call of an instrumented callee. Kieker reconstructs all four; sonde
// declared 3 and 4 invalid until call events were handled.
TEST_F(TraceAnalysisCli, TracesWithCallEventsReconstructAsKiekers) {
  const fs::path log = dir_ / "log";
  fs::create_directories(log);
  std::ofstream(log / "kieker.map") << "$0=kieker.common.record.flow.trace.TraceMetadata\n"
                                       "$1=kieker.common.record.flow.trace.operation."
                                       "BeforeOperationEvent\n"
                                       "$2=kieker.common.record.flow.trace.operation."
                                       "AfterOperationEvent\n"
                                       "$3=kieker.common.record.flow.trace.operation."
                                       "CallOperationEvent\n";
  const std::string sb = "public void shop.Bookstore.searchBook();shop.Bookstore";
  const std::string gb = "public void shop.Catalog.getBook(boolean);shop.Catalog";
  const std::string go = "public void shop.CRM.getOrders();shop.CRM";
  std::ofstream dat(log / "kieker-20261129-120000000-UTC-001.dat");
  auto meta = [&](int id) { dat << "$0;1;" << id << ";1;<no-session-id>;SRV0;" << id << ";-1\n"; };
  auto event = [&](int type, int id, int oi, long ts, const std::string& what) {
    dat << "$" << type << ";1;" << ts << ";" << id << ";" << oi << ";" << what << "\n";
  };
  for (int id : {1, 2}) {
    meta(id);
    const long t = id * 100;
    event(1, id, 0, t, sb);
    event(3, id, 1, t + 1, sb + ";" + gb);
    event(1, id, 2, t + 2, gb);
    event(2, id, 3, t + 3, gb);
    event(3, id, 4, t + 4, sb + ";" + go);
    event(3, id, 5, t + 6, go + ";" + gb);
    event(1, id, 6, t + 7, gb);
    event(2, id, 7, t + 8, gb);
    event(2, id, 8, t + 11, sb);
  }
  meta(3);
  event(3, 3, 0, 304, sb + ";" + go);
  event(3, 3, 1, 306, go + ";" + gb);
  meta(4);
  event(3, 4, 0, 401, sb + ";" + gb);
  event(1, 4, 1, 402, gb);
  event(2, 4, 2, 409, gb);
  dat.close();

  const fs::path out = dir_ / "out";
  const CliRun r = sonde({log.string(), "--out", out.string(), "--print-Execution-Traces",
                          "--print-Assembly-Equivalence-Classes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Traces: 4 valid, 0 invalid"), std::string::npos) << r.out;
  const std::string text = slurp(out / "executionTraces.txt");
  // Trace 1: CRM.getOrders from its call (104) until searchBook returned
  // (111). Components are numbered as Kieker's filter finishes executions:
  // Catalog (getBook at 103), CRM (its call closed at 111 before
  // searchBook), Bookstore.
  EXPECT_NE(text.find("<1[2,1] 104-111 SRV0::@2:shop.CRM.getOrders <no-session-id> (assumed)>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<1[3,2] 107-108 SRV0::@1:shop.Catalog.getBook <no-session-id>>"),
            std::string::npos)
      << text;
  // Trace 3: no execution for its first call's caller.
  EXPECT_NE(text.find("<3[0,0] 304-306 SRV0::@2:shop.CRM.getOrders <no-session-id> (assumed)>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<4[0,0] 402-409 SRV0::@1:shop.Catalog.getBook <no-session-id>>"),
            std::string::npos)
      << text;
  // Three shapes: traces 1 and 2 are one class.
  const std::string classes = slurp(out / "traceAssemblyEquivClasses.txt");
  EXPECT_EQ(std::count(classes.begin(), classes.end(), '\n'), 3) << classes;
  EXPECT_NE(classes.find("cardinality: 2; # executions: 4; representative: 1;"), std::string::npos)
      << classes;
}

}  // namespace
