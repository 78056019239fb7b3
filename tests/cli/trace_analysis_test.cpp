// Runs the built `sonde trace-analysis` on the Kieker test logs with the
// options of Kieker's own runs (HOW-GENERATED.txt), and on bad input:
// exit status (0 ok, 1 input unreadable or output unwritable, 2 usage) and
// error messages that name the file. Golden files are Kieker's own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

const fs::path kKieker = fs::path(SONDE_TESTDATA_DIR) / "kieker";
const fs::path kBookstore = kKieker / "bookstore-oer-2010";

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class TraceAnalysisCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sonde-cli-trace-analysis-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // sonde trace-analysis ARGS..., output captured through files (no shell).
  CliRun sonde(std::vector<std::string> args) {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    args.insert(args.begin(), {SONDE_CLI, "trace-analysis"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    CliRun run;
    const int rc = posix_spawn(&pid, SONDE_CLI, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << SONDE_CLI;
    if (rc != 0) return run;
    int status = 0;
    waitpid(pid, &status, 0);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = slurp(out);
    run.err = slurp(err);
    return run;
  }

  fs::path dir_;
};

TEST_F(TraceAnalysisCli, SelectedTracesAsKiekersThirdRun) {
  const fs::path out = dir_ / "out";
  const CliRun r = sonde({(kBookstore / "log").string(), "--out", out.string(), "--select-traces",
                          "6488138950668976141", "6488138950668976129", "6488138950668976130",
                          "6488138950668976131", "--plot-Deployment-Sequence-Diagrams",
                          "--plot-Assembly-Sequence-Diagrams", "--plot-Call-Trees",
                          "--print-Message-Traces", "--print-Execution-Traces", "--short-labels"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Traces: 4 valid, 0 invalid"), std::string::npos) << r.out;
  const fs::path golden = kBookstore / "kieker-trace-analysis-output";
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

}  // namespace
