// The XRay mode end to end: a clang -fxray-instrument program, not linked
// with sonde, run with libsonde preloaded. libsonde patches the functions the
// patterns allow; an excluded function stays unpatched and leaves no event.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "run_helpers.hpp"

namespace sonde::test {
namespace {

const std::string kProgram = std::string(SONDE_TEST_PROGRAMS) + "/xray/test_xray";

// In the sanitizer build libsonde needs the ASan runtime loaded first. The
// clang-built program does not link it (gcc's runtime would crash in its
// init), so it is preloaded ahead of libsonde, from where this test got it.
std::string preload() {
  std::string libs = SONDE_LIBRARY;
#if defined(__SANITIZE_ADDRESS__)
  Dl_info info{};
  void* asan = dlsym(RTLD_DEFAULT, "__asan_init");
  if (asan != nullptr && dladdr(asan, &info) != 0 && info.dli_fname != nullptr) {
    libs = std::string(info.dli_fname) + " " + libs;
  }
#endif
  return libs;
}

struct Calls {
  std::map<std::string, int> by_operation;  // "before" events per operation
  std::string listing;                      // for failure messages

  int containing(const std::string& needle) const {
    int n = 0;
    for (const auto& [op, k] : by_operation) {
      if (op.find(needle) != std::string::npos) n += k;
    }
    return n;
  }
};

class XrayMode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* why = xray_program_unsupported()) GTEST_SKIP() << why;
    if (access(kProgram.c_str(), X_OK) != 0) {
      GTEST_SKIP() << kProgram << " was not built (needs clang++ with the XRay runtime)";
    }
  }

  // Runs the program under libsonde and returns the calls of its one log,
  // after checking that every trace is valid.
  Calls run(const std::string& name, const std::vector<std::string>& args,
            std::vector<std::string> env = {}) {
    std::string out = fresh_dir("xray_" + name);
    env.push_back("LD_PRELOAD=" + preload());
    env.push_back("SONDE_OUT=" + out);
    env.push_back("SONDE_SUMMARY=false");
    std::vector<std::string> argv{kProgram};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run_program(argv, env);
    Calls calls;
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    // Neither sonde nor XRay has anything to complain about (sanitizer
    // builds may add their own summary lines).
    EXPECT_EQ(r.stderr_text.find("sonde:"), std::string::npos) << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find("XRay"), std::string::npos) << r.stderr_text;
    auto logs = files_with_suffix(out, ".sonde");
    EXPECT_EQ(logs.size(), 1u);
    if (logs.size() != 1) return calls;
    LogContents c = read_contents(logs[0]);
    EXPECT_TRUE(c.stats.ok) << (c.stats.errors.empty() ? "" : c.stats.errors[0]);
    EXPECT_EQ(c.stats.lost_reported, 0u);
    EXPECT_EQ(c.before, c.after + c.failed);
    for (const auto& [id, t] : c.traces) {
      EXPECT_EQ(trace_problem(t), "") << "trace " << id;
      for (const auto& e : t.events) {
        if (e.kind == "before") ++calls.by_operation[e.operation];
      }
    }
    for (const auto& [op, k] : calls.by_operation)
      calls.listing += op + " x" + std::to_string(k) + "\n";
    traces_ = c.traces.size();
    return calls;
  }

  size_t traces_ = 0;
};

TEST_F(XrayMode, EveryCallOfEveryPatchedFunctionIsRecorded) {
  Calls c = run("all", {"50"});
  EXPECT_EQ(c.containing("main"), 1) << c.listing;
  EXPECT_EQ(c.containing("twice(int)"), 50) << "static function\n" << c.listing;
  EXPECT_EQ(c.containing("geometry::Square::area(int) const"), 50) << "method\n" << c.listing;
  EXPECT_EQ(c.containing("countdown(int)"), 150) << "recursion: countdown(2) is 3 calls\n"
                                                 << c.listing;
  EXPECT_EQ(c.containing("forward(int)"), 50) << "tail call (tail-exit sled)\n" << c.listing;
  EXPECT_EQ(c.containing("plus_one(int)"), 50) << c.listing;
  EXPECT_EQ(c.by_operation.size(), 6u) << c.listing;
  EXPECT_EQ(traces_, 1u) << "everything runs inside main";
}

TEST_F(XrayMode, ExcludedFunctionStaysUnpatched) {
  Calls c = run("exclude", {"50"}, {"SONDE_PATTERNS=-*twice*;-*countdown*"});
  EXPECT_EQ(c.containing("twice"), 0) << c.listing;
  EXPECT_EQ(c.containing("countdown"), 0) << c.listing;
  EXPECT_EQ(c.containing("geometry::Square::area(int) const"), 50) << c.listing;
  EXPECT_EQ(c.containing("forward(int)"), 50) << c.listing;
  EXPECT_EQ(c.containing("main"), 1) << c.listing;
}

TEST_F(XrayMode, IncludeListPatchesOnlyTheIncludedFunctions) {
  Calls c = run("include", {"20"}, {"SONDE_PATTERNS=-*;+*area*"});
  EXPECT_EQ(c.containing("geometry::Square::area(int) const"), 20) << c.listing;
  EXPECT_EQ(c.by_operation.size(), 1u) << c.listing;
  EXPECT_EQ(traces_, 20u) << "main is not monitored: each area call is its own trace";
}

TEST_F(XrayMode, WorksWhenXrayPatchedEverythingBeforeMain) {
  // XRay's own patch_premain patches every sled before sonde starts; sonde
  // must still unpatch the excluded functions.
  Calls c = run("premain", {"30"}, {"XRAY_OPTIONS=patch_premain=true", "SONDE_PATTERNS=-*twice*"});
  EXPECT_EQ(c.containing("twice"), 0) << c.listing;
  EXPECT_EQ(c.containing("countdown(int)"), 90) << c.listing;
}

TEST_F(XrayMode, FramesLeftByExceptionsAreClosedAndTracesStayBalanced) {
  Calls c = run("throw", {"40", "throw"});
  EXPECT_EQ(c.containing("guarded(int)"), 40) << c.listing;
  EXPECT_EQ(c.containing("risky(int)"), 40) << c.listing;
  EXPECT_EQ(c.containing("thrower(int)"), 40) << c.listing;
  EXPECT_EQ(c.containing("twice(int)"), 40) << c.listing;
}

TEST_F(XrayMode, PatternFileChangeRepatchesAtRunTime) {
  std::string dir = fresh_dir("xray_repattern_file");
  std::string patterns = dir + "/patterns";
  std::ofstream(patterns) << "-*twice*\n";
  // The program runs 25 iterations, rewrites the file, waits, runs 25 more.
  Calls c = run("repattern", {"25", "repattern", patterns, "-*countdown*"},
                {"SONDE_PATTERNS_FILE=" + patterns, "SONDE_PATTERNS_RELOAD_MS=10"});
  EXPECT_EQ(c.containing("twice"), 25) << "patched for the second half only\n" << c.listing;
  EXPECT_EQ(c.containing("countdown"), 75) << "unpatched for the second half\n" << c.listing;
  EXPECT_EQ(c.containing("geometry::Square::area(int) const"), 50) << c.listing;
}

TEST_F(XrayMode, FunctionUnpatchedWhileRunningStillEndsItsFrame) {
  std::string dir = fresh_dir("xray_inside_file");
  std::string patterns = dir + "/patterns";
  std::ofstream(patterns) << "# all\n";
  // long_running excludes itself: its exit sled is gone by the time it
  // returns, so only the exit of main can close its frame.
  Calls c = run("inside", {"10", "inside", patterns, "-*long_running*"},
                {"SONDE_PATTERNS_FILE=" + patterns, "SONDE_PATTERNS_RELOAD_MS=10"});
  EXPECT_EQ(c.containing("long_running("), 1) << c.listing;
  EXPECT_EQ(c.containing("twice(int)"), 21) << c.listing;
  EXPECT_EQ(c.containing("main"), 1) << c.listing;
  EXPECT_EQ(traces_, 1u) << "balanced (checked by run) and still one trace";
}

TEST_F(XrayMode, ConfigKeyTurnsTheModeOff) {
  Calls c = run("off", {"10"}, {"SONDE_XRAY=off"});
  EXPECT_TRUE(c.by_operation.empty()) << c.listing;
}

}  // namespace
}  // namespace sonde::test
