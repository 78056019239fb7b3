#include "run_helpers.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "format/schema.hpp"

namespace sonde::test {
namespace fs = std::filesystem;

RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  RunResult result;
  std::string err_path =
      fs::temp_directory_path() / ("sonde-test-stderr-" + std::to_string(getpid()));
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    // The program starts as from an interactive shell: a test run in the
    // background (`cmd &` without job control) inherits SIGINT and SIGQUIT
    // ignored, and libsonde leaves ignored stop signals alone.
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  result.stderr_text = ss.str();
  fs::remove(err_path);
  return result;
}

// Per process: CTest runs each test of a suite as its own process, in
// parallel, and a suite's SetUpTestSuite runs in each of them.
std::vector<std::string> env_for(const std::string& out, std::vector<std::string> extra) {
  bool summary_given = false;
  for (const auto& e : extra) summary_given = summary_given || e.rfind("SONDE_SUMMARY=", 0) == 0;
  extra.push_back("SONDE_OUT=" + out);
  if (!summary_given) extra.push_back("SONDE_SUMMARY=false");
  return extra;
}

std::string fresh_dir(const std::string& name) {
  fs::path dir =
      fs::path(SONDE_BINARY_DIR) / "test-output" / (name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<std::string> files_with_suffix(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string p = e.path().string();
    if (p.size() >= suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

class Collector final : public format::RecordSink {
 public:
  explicit Collector(LogContents& c) : c_(c) {}
  bool on_record(const format::Record& r) override {
    const std::string& cls = r.schema->class_name;
    ++c_.records_by_class[cls];
    if (cls == format::kieker_class::kTraceMetadata) {
      TraceCopy& t = c_.traces[r.i64(0)];
      t.trace_id = r.i64(0);
      t.thread_id = r.i64(1);
      t.parent_trace_id = r.i64(4);
      t.parent_order_id = r.i64(5);
    } else if (cls == format::kieker_class::kBeforeOperation ||
               cls == format::kieker_class::kAfterOperation ||
               cls == format::kieker_class::kAfterOperationFailed) {
      FlowEventCopy e;
      e.kind = cls == format::kieker_class::kBeforeOperation  ? "before"
               : cls == format::kieker_class::kAfterOperation ? "after"
                                                              : "failed";
      e.time = r.i64(0);
      e.trace_id = r.i64(1);
      e.order = r.i64(2);
      e.operation = std::string(r.str(3));
      if (e.kind == "failed") e.cause = std::string(r.str(5));
      (e.kind == "before" ? c_.before : e.kind == "after" ? c_.after : c_.failed)++;
      c_.traces[e.trace_id].events.push_back(std::move(e));
    }
    return true;
  }

 private:
  LogContents& c_;
};

}  // namespace

LogContents read_contents(const std::string& path) {
  LogContents c;
  Collector collector(c);
  c.stats = format::read_log(path, collector);
  return c;
}

std::string trace_problem(const TraceCopy& t) {
  if (t.events.empty()) return "trace " + std::to_string(t.trace_id) + " has no events";
  int64_t depth = 0;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const FlowEventCopy& e = t.events[i];
    if (e.order != static_cast<int64_t>(i)) {
      return "trace " + std::to_string(t.trace_id) + ": order index " + std::to_string(e.order) +
             " at position " + std::to_string(i);
    }
    if (i > 0 && e.time < t.events[i - 1].time) return "time goes backwards";
    depth += e.kind == "before" ? 1 : -1;
    if (depth < 0) return "after without before";
  }
  if (depth != 0) return "unbalanced: depth " + std::to_string(depth) + " at end";
  return "";
}

}  // namespace sonde::test
