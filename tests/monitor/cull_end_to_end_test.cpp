// Automatic overhead culling end to end (docs/cull.md): test_cull, built
// with -finstrument-functions and not linked with sonde, runs under the
// preloaded libsonde with cull = auto. Its helper (a few ns, a thousand
// calls per request) must be culled after the first phase and leave no
// event after it; its request (>= 50 µs) must stay, every call of it; the
// helper's hook calls must be patched, and the program's result unchanged.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "run_helpers.hpp"

namespace sonde::test {
namespace {

const std::string kCullProgram = kPrograms + "/test_cull";

struct CullRun {
  RunResult run;
  int warmup = -1;
  int requests = -1;
  unsigned long result = 0;
  std::string report;  // the *.cull.txt file's text, "" if none
  LogContents log;
  std::vector<const TraceCopy*> by_start;  // traces in the order they began
};

// `mode`: the program's arguments after REQUESTS.
CullRun run_cull_program(const std::string& name, int requests, std::vector<std::string> env,
                         const std::vector<std::string>& mode = {"wait"}) {
  CullRun c;
  std::string out = fresh_dir("cull_" + name);
  env.push_back(std::string("LD_PRELOAD=") + SONDE_LIBRARY);
  env.push_back("SONDE_CULL=auto");
  std::vector<std::string> argv = {kCullProgram, std::to_string(requests)};
  argv.insert(argv.end(), mode.begin(), mode.end());
  c.run = run_program(argv, env_for(out, std::move(env)));
  size_t at = c.run.stderr_text.find("warmup=");
  if (at != std::string::npos) {
    std::sscanf(c.run.stderr_text.c_str() + at, "warmup=%d requests=%d result=%lu", &c.warmup,
                &c.requests, &c.result);
  }
  auto reports = files_with_suffix(out, ".cull.txt");
  if (reports.size() == 1) {
    std::ifstream in(reports[0]);
    std::stringstream text;
    text << in.rdbuf();
    c.report = text.str();
  }
  auto logs = files_with_suffix(out, ".sonde");
  if (logs.size() == 1) c.log = read_contents(logs[0]);
  for (const auto& [id, t] : c.log.traces) c.by_start.push_back(&t);
  std::sort(c.by_start.begin(), c.by_start.end(), [](const TraceCopy* a, const TraceCopy* b) {
    return a->events.front().time < b->events.front().time;
  });
  return c;
}

// The unmonitored program's result for `requests` requests.
unsigned long plain_cull_result(int requests, bool tail = false) {
  std::vector<std::string> argv = {kCullProgram, std::to_string(requests), "nowait"};
  if (tail) argv.push_back("tail");
  RunResult r = run_program(argv, {});
  unsigned long result = 0;
  int warmup = -1, n = -1;
  size_t at = r.stderr_text.find("warmup=");
  EXPECT_NE(at, std::string::npos) << r.stderr_text;
  if (at != std::string::npos) {
    std::sscanf(r.stderr_text.c_str() + at, "warmup=%d requests=%d result=%lu", &warmup, &n,
                &result);
  }
  return result;
}

int count_calls(const TraceCopy& t, const std::string& function) {
  int n = 0;
  for (const FlowEventCopy& e : t.events) {
    // Operations read back as C++ names: "helper(unsigned int)".
    n += e.kind == "before" && e.operation.rfind(function + "(", 0) == 0;
  }
  return n;
}

int count_calls(const LogContents& log, const std::string& function) {
  int n = 0;
  for (const auto& [id, t] : log.traces) n += count_calls(t, function);
  return n;
}

// "call sites patched: N" from the exit summary, or -1.
long patched_sites(const std::string& stderr_text) {
  size_t at = stderr_text.find("call sites patched: ");
  if (at == std::string::npos) return -1;
  return std::strtol(stderr_text.c_str() + at + 20, nullptr, 10);
}

void expect_valid_log(const CullRun& c) {
  EXPECT_TRUE(c.log.stats.ok) << (c.log.stats.errors.empty() ? "" : c.log.stats.errors[0]);
  EXPECT_EQ(c.log.stats.lost_reported, 0u);
  EXPECT_EQ(c.log.before, c.log.after + c.log.failed);
  for (const auto& [id, t] : c.log.traces) EXPECT_EQ(trace_problem(t), "") << "trace " << id;
}

TEST(CullEndToEnd, HotHelperIsCulledPatchedAndLeavesNoEventAfterThePhase) {
  const int requests = 3000;  // ~150 ms: past the exit hooks' grace period too
  const unsigned long expected = plain_cull_result(requests);
  CullRun c =
      run_cull_program("culled", requests, {"SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=200000"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  ASSERT_EQ(c.requests, requests) << c.run.stderr_text;
  EXPECT_EQ(c.result, expected) << "patching changed what the program computes";
  ASSERT_GE(c.warmup, 1) << c.run.stderr_text;
  // The report names the helper, as a pattern line, and only the helper.
  EXPECT_NE(c.report.find("\n-helper(unsigned int)\n"), std::string::npos) << c.report;
  EXPECT_EQ(c.report.find("\n-request"), std::string::npos) << c.report;
  EXPECT_NE(c.run.stderr_text.find("sonde: cull: 1 functions excluded ("), std::string::npos)
      << c.run.stderr_text;
  EXPECT_GT(patched_sites(c.run.stderr_text), 0) << c.run.stderr_text;
  // The helper's exit hook call too, not only its enter's.
  const size_t exits = c.run.stderr_text.find(" of them exit hooks");
  ASSERT_NE(exits, std::string::npos) << c.run.stderr_text;
  const size_t open = c.run.stderr_text.rfind('(', exits);
  ASSERT_NE(open, std::string::npos);
  EXPECT_GT(std::strtol(c.run.stderr_text.c_str() + open + 1, nullptr, 10), 0) << c.run.stderr_text;

  expect_valid_log(c);
  // Nothing failed: no frame was left open by a patched exit hook.
  EXPECT_EQ(c.log.failed, 0);
  // Every request is in the log; the helper only in the first phase.
  EXPECT_EQ(count_calls(c.log, "request"), c.warmup + requests);
  EXPECT_GT(count_calls(c.log, "helper"), 0);
  ASSERT_GE(c.by_start.size(), static_cast<size_t>(requests));
  int after_phase_helpers = 0, after_phase_requests = 0;
  for (size_t i = c.by_start.size() - requests; i < c.by_start.size(); ++i) {
    after_phase_requests += count_calls(*c.by_start[i], "request");
    after_phase_helpers += count_calls(*c.by_start[i], "helper");
    EXPECT_EQ(c.by_start[i]->events.size(), 2u) << "trace " << c.by_start[i]->trace_id;
  }
  EXPECT_EQ(after_phase_requests, requests);
  EXPECT_EQ(after_phase_helpers, 0);
}

// After a window that culls nothing, observation pauses (here for at least
// cull_phase_ms, 5 s); code that starts running during the pause ends it,
// so its hot helper is culled within a window, not traced until the pause
// runs out (leveldb's db_bench: fillseq's helpers appear only after the
// test data is built, and were traced in full).
TEST(CullEndToEnd, NewCodeDuringAPauseIsObservedAndItsHelperCulled) {
  const int requests = 2000;  // 2,000,000 calls of other_helper, well under 5 s
  CullRun c = run_cull_program(
      "phases", requests,
      {"SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=2000", "SONDE_CULL_PHASE_MS=5000"},
      {"phases"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  ASSERT_EQ(c.requests, requests) << c.run.stderr_text;
  EXPECT_NE(c.report.find("\n-other_helper(unsigned int)\n"), std::string::npos) << c.report;
  // At least one pause ended early: how many depends on how many windows
  // the program's speed gives before other_helper starts (a ThreadSanitizer
  // build's first window culled nothing, and its second pause ended early
  // too).
  const std::string ended = " pause(s) ended early by new functions";
  const size_t at = c.run.stderr_text.find(ended);
  ASSERT_NE(at, std::string::npos) << c.run.stderr_text;
  size_t digits = at;
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(c.run.stderr_text[digits - 1])))
    --digits;
  ASSERT_LT(digits, at) << c.run.stderr_text;
  EXPECT_GE(std::stoi(c.run.stderr_text.substr(digits, at - digits)), 1) << c.run.stderr_text;
  expect_valid_log(c);
  EXPECT_EQ(count_calls(c.log, "other_request"), requests);
  // Culled after a window of 2,000 calls plus what the program ran while
  // the writer caught up, at most a tenth of the requests (the program
  // waits for it there); traced in full (2,000,000) without the early end.
  EXPECT_LT(count_calls(c.log, "other_helper"), requests * 1000 / 4) << c.run.stderr_text;
}

TEST(CullEndToEnd, APlusPatternPinsTheHelperIn) {
  const int requests = 20;
  CullRun c = run_cull_program(
      "pinned", requests,
      {"SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=100000", "SONDE_PATTERNS=+helper*"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  ASSERT_GE(c.warmup, 1) << c.run.stderr_text;
  EXPECT_NE(c.report.find("# pinned"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("helper(unsigned int)"), std::string::npos) << c.report;
  EXPECT_EQ(c.report.find("\n-helper"), std::string::npos) << c.report;
  EXPECT_NE(c.run.stderr_text.find("sonde: cull: 0 functions excluded"), std::string::npos)
      << c.run.stderr_text;
  EXPECT_EQ(patched_sites(c.run.stderr_text), 0) << c.run.stderr_text;
  expect_valid_log(c);
  ASSERT_GE(c.by_start.size(), static_cast<size_t>(requests));
  for (size_t i = c.by_start.size() - requests; i < c.by_start.size(); ++i) {
    EXPECT_EQ(count_calls(*c.by_start[i], "request"), 1);
    EXPECT_EQ(count_calls(*c.by_start[i], "helper"), 1000);
  }
}

TEST(CullEndToEnd, WithoutPatchingTheFilterStillExcludesTheHelper) {
  const int requests = 200;
  const unsigned long expected = plain_cull_result(requests);
  CullRun c = run_cull_program(
      "unpatched", requests,
      {"SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=100000", "SONDE_PATCH_CALL_SITES=false"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  EXPECT_EQ(c.result, expected);
  EXPECT_EQ(patched_sites(c.run.stderr_text), 0) << c.run.stderr_text;
  expect_valid_log(c);
  EXPECT_EQ(count_calls(c.log, "request"), c.warmup + requests);
  ASSERT_GE(c.by_start.size(), static_cast<size_t>(requests));
  int after_phase_helpers = 0;
  for (size_t i = c.by_start.size() - requests; i < c.by_start.size(); ++i) {
    after_phase_helpers += count_calls(*c.by_start[i], "helper");
  }
  EXPECT_EQ(after_phase_helpers, 0);
}

TEST(CullEndToEnd, AProgramEndingDuringThePhaseStillGetsItsReport) {
  // 50 requests: 50,000 helper calls, half the default 100,000-call window.
  // The helper is a straight-line leaf and short from its first calls,
  // culled without its window's end unless both are off (next tests).
  const int requests = 50;
  CullRun c = run_cull_program(
      "short", requests,
      {"SONDE_SUMMARY=true", "SONDE_CULL_LEAF_INSTRUCTIONS=0", "SONDE_CULL_EARLY_PERCENT=0"},
      {"nowait"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  EXPECT_NE(c.report.find("ended during the first window"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("\n-helper(unsigned int)\n"), std::string::npos) << c.report;
  EXPECT_NE(c.run.stderr_text.find("1 functions would be excluded"), std::string::npos)
      << c.run.stderr_text;
  // Nothing was excluded in this run.
  expect_valid_log(c);
  EXPECT_EQ(count_calls(c.log, "request"), requests);
  EXPECT_EQ(count_calls(c.log, "helper"), requests * 1000);
}

// The helper's code is a straight-line leaf (leaf_code.hpp): culled once it
// has cull_min_calls calls, although its window (here longer than the run)
// never ends; the request, which loops, is not.
TEST(CullEndToEnd, AStraightLineLeafIsCulledBeforeItsWindowEnds) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer instruments the test program too: every function calls
  // __tsan_func_entry and __tsan_func_exit, so none is a leaf.
  GTEST_SKIP() << "no function of a ThreadSanitizer build is a straight-line leaf";
#endif
  const int requests = 2000;  // 2,000,000 helper calls, at least 100 ms
  CullRun c = run_cull_program(
      "leaf", requests,
      {"SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=1000000000", "SONDE_CULL_PHASE_MS=600000"},
      {"settle"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  ASSERT_EQ(c.requests, requests) << c.run.stderr_text;
  EXPECT_NE(c.report.find("\n-helper(unsigned int)\n"), std::string::npos) << c.report;
  EXPECT_EQ(c.report.find("\n-request"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("1 of them straight-line leaves"), std::string::npos) << c.report;
  EXPECT_NE(c.run.stderr_text.find("1 functions excluded (before the first window ended)"),
            std::string::npos)
      << c.run.stderr_text;
  expect_valid_log(c);
  EXPECT_EQ(count_calls(c.log, "request"), requests);
  // Recorded until the writer, behind the program, saw its 100th call and
  // published the exclusion; without leaves, all 2,000,000 would be.
  EXPECT_LT(count_calls(c.log, "helper"), requests * 1000 / 2) << c.run.stderr_text;
}

// With leaves off, the helper is culled as soon as its first cull_min_calls
// calls average under cull_early_percent of cull_max_ns, although its
// window (longer than the run) never ends.
// A --cull run with no window end in sight (and no leaf rule): `helper`
// must be culled early, before half of its 2,000 x 1,000 calls, and no
// request with it.
void expect_culled_early(const std::string& name, const std::vector<std::string>& mode,
                         const std::string& helper) {
  const int requests = 2000;
  CullRun c = run_cull_program(name, requests,
                               {"SONDE_SUMMARY=true", "SONDE_CULL_LEAF_INSTRUCTIONS=0",
                                "SONDE_CULL_PHASE_CALLS=1000000000", "SONDE_CULL_PHASE_MS=600000"},
                               mode);
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  ASSERT_EQ(c.requests, requests) << c.run.stderr_text;
  EXPECT_NE(c.report.find("\n-" + helper + "(unsigned int)\n"), std::string::npos) << c.report;
  EXPECT_EQ(c.report.find("\n-request"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("1 of them others culled early"), std::string::npos) << c.report;
  expect_valid_log(c);
  EXPECT_EQ(count_calls(c.log, "request"), requests);
  EXPECT_LT(count_calls(c.log, helper), requests * 1000 / 2) << c.run.stderr_text;
}

TEST(CullEndToEnd, AFunctionShortFromItsFirstCallsIsCulledBeforeItsWindowEnds) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer instruments the test program too: its helper's calls
  // last longer than the early threshold (500 ns).
  GTEST_SKIP() << "a ThreadSanitizer build's helper is not short";
#endif
  expect_culled_early("early", {"settle"}, "helper");
}

// One slow call among a short function's first ones (a preemption, here a
// 5-ms sleep in its 50th call) must not keep it monitored until its window
// ends: the early rule looks again each time its calls double, and the
// mean over 16,384 calls is back under the threshold.
TEST(CullEndToEnd, AShortFunctionWithOneSlowEarlyCallIsStillCulledEarly) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a ThreadSanitizer build's helper is not short";
#endif
  expect_culled_early("stall", {"settle", "stall"}, "helper_stall");
}

// "restored N" from the exit summary, or -1.
long restored_sites(const std::string& stderr_text) {
  size_t at = stderr_text.find("restored ");
  return at == std::string::npos ? -1 : std::strtol(stderr_text.c_str() + at + 9, nullptr, 10);
}

// A pattern change that monitors an excluded (and patched) function again
// puts its hook calls back: the helper is excluded by patterns_file for the
// first half of the requests, then pinned in.
TEST(CullEndToEnd, APatternReloadRestoresPatchedSites) {
  const int requests = 400;
  const unsigned long expected = plain_cull_result(requests);
  const std::string patterns = fresh_dir("cull_restore_patterns") + "/patterns.txt";
  std::ofstream(patterns) << "-helper*\n";
  CullRun c = run_cull_program(
      "restore", requests,
      {"SONDE_SUMMARY=true", "SONDE_PATTERNS_FILE=" + patterns, "SONDE_PATTERNS_RELOAD_MS=50"},
      {"repattern", patterns});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  EXPECT_EQ(c.result, expected) << "patching or restoring changed what the program computes";
  EXPECT_GT(patched_sites(c.run.stderr_text), 0) << c.run.stderr_text;
  EXPECT_GT(restored_sites(c.run.stderr_text), 0) << c.run.stderr_text;
  expect_valid_log(c);
  ASSERT_EQ(c.by_start.size(), static_cast<size_t>(requests));
  for (int i = 0; i < requests; ++i) {
    EXPECT_EQ(count_calls(*c.by_start[i], "helper"), i < requests / 2 ? 0 : 1000)
        << "request " << i;
  }
}

// helper_tail's exit hook call is a tail jump as g++ -O2 compiles it, with
// or without ASan; ThreadSanitizer calls __tsan_func_exit after the hook,
// so under it the hook call is an ordinary call (patched as one).
#if defined(__SANITIZE_THREAD__)
constexpr long kHelperTailJumps = 0;
#else
constexpr long kHelperTailJumps = 1;
#endif

// "N tail jumps made ret" from the exit summary, or -1.
long tail_jumps_patched(const std::string& stderr_text) {
  size_t at = stderr_text.find(" tail jumps made ret");
  if (at == std::string::npos) return -1;
  size_t begin = stderr_text.rfind(' ', at - 1);
  return std::strtol(stderr_text.c_str() + begin + 1, nullptr, 10);
}

// A void helper whose exit hook call is a tail jump: the hook returns to the
// helper's caller, so the site it reports is the caller's call of the
// helper. Culling finds the jump in the helper's code and makes it `ret`.
TEST(CullEndToEnd, AnExitHookReachedByATailJumpIsPatchedToRet) {
  const int requests = 3000;
  const unsigned long expected = plain_cull_result(requests, /*tail=*/true);
  CullRun c = run_cull_program("tail", requests,
                               {"SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=200000"}, {"tail"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  ASSERT_EQ(c.requests, requests) << c.run.stderr_text;
  EXPECT_EQ(c.result, expected) << "patching changed what the program computes";
  EXPECT_NE(c.report.find("\n-helper_tail(unsigned int?)\n"), std::string::npos) << c.report;
  EXPECT_EQ(tail_jumps_patched(c.run.stderr_text), kHelperTailJumps) << c.run.stderr_text;
  expect_valid_log(c);
  EXPECT_EQ(c.log.failed, 0);
  EXPECT_EQ(count_calls(c.log, "request"), c.warmup + requests);
  ASSERT_GE(c.by_start.size(), static_cast<size_t>(requests));
  int after_phase = 0;
  for (size_t i = c.by_start.size() - requests; i < c.by_start.size(); ++i)
    after_phase += count_calls(*c.by_start[i], "helper_tail");
  EXPECT_EQ(after_phase, 0);
}

// Monitored again, the tail jump comes back: every call records its exit.
TEST(CullEndToEnd, APatternReloadRestoresPatchedTailJumps) {
  const int requests = 400;
  const unsigned long expected = plain_cull_result(requests, /*tail=*/true);
  const std::string patterns = fresh_dir("cull_restore_tail_patterns") + "/patterns.txt";
  std::ofstream(patterns) << "-helper*\n";
  CullRun c = run_cull_program(
      "restore_tail", requests,
      {"SONDE_SUMMARY=true", "SONDE_PATTERNS_FILE=" + patterns, "SONDE_PATTERNS_RELOAD_MS=50"},
      {"repattern", patterns, "tail"});
  ASSERT_EQ(c.run.exit_code, 0) << c.run.stderr_text;
  EXPECT_EQ(c.result, expected) << "patching or restoring changed what the program computes";
  EXPECT_EQ(tail_jumps_patched(c.run.stderr_text), kHelperTailJumps) << c.run.stderr_text;
  EXPECT_GT(restored_sites(c.run.stderr_text), 0) << c.run.stderr_text;
  expect_valid_log(c);
  EXPECT_EQ(c.log.failed, 0);
  ASSERT_EQ(c.by_start.size(), static_cast<size_t>(requests));
  for (int i = 0; i < requests; ++i) {
    EXPECT_EQ(count_calls(*c.by_start[i], "helper_tail"), i < requests / 2 ? 0 : 1000)
        << "request " << i;
  }
}

// XRay: culled functions are unpatched. test_xray's functions are all tiny
// (only main is long), so all five of its helpers go after the phase.
TEST(CullEndToEnd, XrayUnpatchesCulledFunctions) {
  if (const char* why = xray_program_unsupported()) GTEST_SKIP() << why;
  const std::string program = kPrograms + "/xray/test_xray";
  if (access(program.c_str(), X_OK) != 0) GTEST_SKIP() << program << " was not built";
  std::string preload = SONDE_LIBRARY;
#if defined(__SANITIZE_ADDRESS__)
  // As xray_mode_test.cpp: the clang-built program does not link the ASan runtime.
  Dl_info info{};
  void* asan = dlsym(RTLD_DEFAULT, "__asan_init");
  if (asan != nullptr && dladdr(asan, &info) != 0 && info.dli_fname != nullptr) {
    preload = std::string(info.dli_fname) + " " + preload;
  }
#endif
  const std::string out = fresh_dir("cull_xray");
  const int iterations = 2000000;
  RunResult r = run_program({program, std::to_string(iterations)},
                            env_for(out, {"LD_PRELOAD=" + preload, "SONDE_CULL=auto",
                                          "SONDE_SUMMARY=true", "SONDE_CULL_PHASE_CALLS=50000"}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("sonde: cull: 5 functions excluded"), std::string::npos)
      << r.stderr_text;
  auto reports = files_with_suffix(out, ".cull.txt");
  ASSERT_EQ(reports.size(), 1u);
  std::ifstream in(reports[0]);
  std::stringstream report;
  report << in.rdbuf();
  for (const char* line : {"\n-twice(int)\n", "\n-countdown(int)\n", "\n-plus_one(int)\n"}) {
    EXPECT_NE(report.str().find(line), std::string::npos) << line << report.str();
  }
  auto logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 1u);
  LogContents log = read_contents(logs[0]);
  EXPECT_TRUE(log.stats.ok);
  EXPECT_EQ(log.before, log.after + log.failed);
  // Each iteration calls twice() once: only the phase's calls are in the log.
  int twice = 0;
  for (const auto& [id, t] : log.traces) twice += count_calls(t, "twice");
  EXPECT_GT(twice, 0);
  EXPECT_LT(twice, iterations / 4);
}

}  // namespace
}  // namespace sonde::test
