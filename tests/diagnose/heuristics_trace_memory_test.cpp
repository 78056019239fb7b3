// The trace-reading heuristics on a log shaped like a real program's hot
// path: few requests, each calling a one-line function 100,000 times (the
// ticket office's best-seat search calls one 52,000 times per order). The
// diagnosis needs aggregates of such a log, not its executions: it must
// finish in memory that does not grow with them (on 2026-12-05 it kept
// every execution and was killed at 24 GB on scenario t03's 98 M).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <new>

#include "diagnose/heuristics/experiment_traces.hpp"
#include "diagnose_test_support.hpp"

// clang before 14 defines no __SANITIZE_* macros.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SONDE_CLANG_SANITIZER 1
#endif
#endif
#ifndef SONDE_CLANG_SANITIZER
#define SONDE_CLANG_SANITIZER 0
#endif

namespace sonde::diagnose::test {
namespace {

constexpr int kOrders = 20;
constexpr int kHotCalls = 100'000;  // calls of the hot function per order
constexpr int64_t kTraceBase = 7'000;

// Order o sends to the payment service in a loop of 2 + o % 2 messages
// (a loop over data), after its hot search.
void write_hot_orders(const TempDir& d) {
  ExperimentSpec s;
  s.id = "single-u1";
  s.kind = "single_user";
  s.users = 1;
  s.requests = kOrders;
  s.inter_request_ns = 300 * kMs;  // each order's events span ~200 ms
  s.probes = {"response_time", "messaging"};
  write_experiment(d.path(), s);
  write_log(experiment_path(d.path(), "single-u1"), [&](format::RecordSink& sink) {
    for (int o = 0; o < kOrders; ++o) {
      TraceWriter t(sink, kTraceBase + o, kT0 + o * 300 * kMs);
      t.enter("tickets::place_order");
      t.enter("tickets::best_seats");
      for (int c = 0; c < kHotCalls; ++c) {
        t.enter("tickets::view_score");
        t.leave("tickets::view_score");
      }
      t.leave("tickets::best_seats");
      for (int m = 0; m < 2 + o % 2; ++m) {
        t.enter("tickets::authorize");
        t.send("tickets>payment", 32);
        t.leave("tickets::authorize");
      }
      t.leave("tickets::place_order");
    }
  });
}

// Runs `body` in a child process whose address space may grow by at most
// `headroom` bytes; the child's exit status: 0 when `body` returned true,
// 1 when false, 2 when memory ran out (4: no child ran). The child is a
// fork of a process that may have threads: ctest runs each test alone, and
// the diagnosis code the child runs starts none.
int in_limited_child(size_t headroom, const std::function<bool()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    size_t vm_pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%zu", &vm_pages) != 1) vm_pages = 0;
      std::fclose(f);
    }
    const size_t now = vm_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const rlimit limit{now + headroom, now + headroom};
    if (now == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    try {
      _exit(body() ? 0 : 1);
    } catch (const std::bad_alloc&) {
      _exit(2);
    }
  }
  if (pid < 0) return 4;
  int status = 0;
  pid_t waited = 0;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited != pid) return 4;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(TraceMemory, AHotTinyFunctionIsReadInMemoryThatDoesNotGrowWithItsCalls) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || SONDE_CLANG_SANITIZER
  GTEST_SKIP() << "the sanitizers reserve terabytes of address space; a limit on it means "
                  "nothing there (the release build runs this test)";
#endif
  TempDir d;
  write_hot_orders(d);
  // 2 M executions: kept whole (~120 bytes each) they alone need ~240 MB.
  constexpr size_t kHeadroom = size_t{128} << 20;
  const int status = in_limited_child(kHeadroom, [&] {
    const ExperimentData data = load_experiment_data(d.path());
    const heuristics::ExperimentTraces& traces = heuristics::experiment_traces(data.experiments[0]);
    if (!traces.error.empty() || traces.traces.size() != kOrders) return false;
    for (const auto& [id, t] : traces.traces) {
      const uint64_t sends = 2 + (id - kTraceBase) % 2;
      if (t.executions != 2 + kHotCalls + sends || !t.root() || t.end <= t.start) return false;
    }
    const NodeResult r = evaluate(d.path(), "empty_semi_trucks");
    return r.status == Status::kDetected && r.evidence.size() == 1 &&
           r.evidence[0].values["requests"] == kOrders &&
           r.evidence[0].values["iterations"].get<double>() == 2.5;
  });
  EXPECT_EQ(status, 0)
      << "0: right answers in the memory limit; 1: wrong answers; 2: out of "
         "memory; 3: no limit could be set; 4: no child ran; above 128: killed by a signal";
}

}  // namespace
}  // namespace sonde::diagnose::test
