// Runs test programs under monitoring and reads their logs back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "format/log_reader.hpp"
#include "format/record.hpp"

namespace sonde::test {

// The sanitizer builds (scripts/build-sanitizers.sh). Their programs run
// 5-20 times slower, so stress tests size their load by kSanitized; and
// some tests cannot run there at all: they skip, with the reason below.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Why this build cannot run a child of a multi-threaded fork that starts
// threads (its writer thread), or nullptr. TSan cannot start threads
// there. g++ 12's ASan allocator is not fork-safe: the child's new writer
// thread can wait forever in SizeClassAllocator64's mutex, held by another
// parent thread at fork() (gdb, 2 of 16 runs on a loaded VM, and a fresh
// clone's run on 2026-12-04), and the child's exit waits for that thread.
// The release build runs these tests.
inline const char* threads_after_fork_unsupported() {
#if defined(__SANITIZE_THREAD__)
  return "TSan cannot start threads after a multi-threaded fork";
#elif defined(__SANITIZE_ADDRESS__)
  return "ASan's allocator can deadlock in a child of a threaded program";
#else
  return nullptr;
#endif
}

// Why the XRay test program (built by clang, without TSan) cannot load
// this build's libsonde, or nullptr.
inline const char* xray_program_unsupported() {
#if defined(__SANITIZE_THREAD__)
  return "the XRay program cannot load a TSan-instrumented libsonde";
#else
  return nullptr;
#endif
}

// The test programs (tests/monitor/programs), and the workload most tests run.
inline const std::string kPrograms = SONDE_TEST_PROGRAMS;
inline const std::string kWorkload = kPrograms + "/test_workload";

struct RunResult {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string stderr_text;
};

// Runs `argv` with extra environment entries ("KEY=VALUE"); stderr captured.
RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// The environment of a program monitored into `out` without its shutdown
// summary on stderr (unless `extra` sets SONDE_SUMMARY), plus `extra`
// ("KEY=VALUE").
std::vector<std::string> env_for(const std::string& out, std::vector<std::string> extra = {});

// A fresh empty directory under the build tree, named after the test.
std::string fresh_dir(const std::string& name);
// Files in `dir` (not recursive) whose names end in `suffix`.
std::vector<std::string> files_with_suffix(const std::string& dir, const std::string& suffix);

struct FlowEventCopy {
  std::string kind;  // "before", "after", "failed"
  int64_t time = 0;
  int64_t trace_id = 0;
  int64_t order = 0;
  std::string operation;
  std::string cause;
};

struct TraceCopy {
  int64_t trace_id = 0;
  int64_t thread_id = 0;
  int64_t parent_trace_id = 0;
  int64_t parent_order_id = 0;
  std::vector<FlowEventCopy> events;
};

// Everything read from a log, copied out of the reader's string pool.
struct LogContents {
  format::LogReadStats stats;
  std::map<int64_t, TraceCopy> traces;
  std::map<std::string, int64_t> records_by_class;
  int64_t before = 0, after = 0, failed = 0;
};

LogContents read_contents(const std::string& path);

// Checks Kieker's validity rules on one trace; returns "" or the first problem.
std::string trace_problem(const TraceCopy& t);

}  // namespace sonde::test
