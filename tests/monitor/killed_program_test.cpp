// Fault injection: a monitored program killed by SIGKILL in the middle of
// writing. Nothing runs at exit, so the log simply stops: the reader must
// read it up to the last complete chunk, say that the log was cut (not
// closed, or how many bytes of a chunk are missing), and every trace it
// delivers must be well formed. The program is killed while it writes
// (once its log has grown past a few chunks), not at a chosen instant, so
// the test checks invariants, never exact counts.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "run_helpers.hpp"

extern char** environ;

namespace sonde::test {
namespace {

namespace fs = std::filesystem;

const std::string kKilledWorkload = std::string(SONDE_TEST_PROGRAMS) + "/test_workload";

// Size of the one .sonde file in `dir` (0 while there is none).
uintmax_t log_size(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".sonde") return e.file_size();
  return 0;
}

TEST(KilledProgram, LogReadsUpToTheLastCompleteChunk) {
  const std::string out = fresh_dir("killed_program");
  // Far more work than the test waits for: 2 threads x 10^8 iterations.
  std::vector<std::string> args = {kKilledWorkload, "2", "100000000", "3"};
  std::vector<std::string> env = {"SONDE_OUT=" + out, "SONDE_SUMMARY=false",
                                  "SONDE_FLUSH_INTERVAL_MS=10"};
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, kKilledWorkload.c_str(), nullptr, nullptr, argv.data(), envp.data()),
            0);
  // Wait until several chunks are on disk, then kill without warning.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (log_size(out) < 256 * 1024 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  const auto logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 1u);
  ASSERT_GE(fs::file_size(logs[0]), 256u * 1024) << "killed before the log grew";
  analysis::TraceAnalysis analysis;
  const format::LogReadStats read = format::read_log(logs[0], analysis.records());
  const analysis::AnalysisResult result = analysis.finish();

  // Readable: no error, records delivered, and the cut is reported.
  EXPECT_TRUE(read.ok) << (read.errors.empty() ? "" : read.errors[0]);
  EXPECT_GT(read.records, 0u);
  ASSERT_FALSE(read.warnings.empty());
  const std::string& warning = read.warnings[0];
  EXPECT_TRUE(warning.find("bytes cut off") != std::string::npos ||
              warning.find("was not closed") != std::string::npos)
      << warning;

  // Every complete trace is valid. A thread's traces follow one another and
  // its events reach the log in order, so only the trace each thread was in
  // when it died can be incomplete: at most one per thread (2).
  EXPECT_GT(result.traces.valid, 0u);
  EXPECT_LE(result.traces.invalid, 2u) << "more broken traces than threads in flight";
}

}  // namespace
}  // namespace sonde::test
