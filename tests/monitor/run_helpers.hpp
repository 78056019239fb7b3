// Runs test programs under monitoring and reads their logs back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "format/log_reader.hpp"
#include "format/record.hpp"

namespace sonde::test {

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
