// fork() while another thread registers manual operations in a loop (taking
// libsonde's registry lock). Each child registers operations of its own and
// exits; before libsonde held every lock across fork, a child could inherit
// the registry lock held and hang on its first new operation.
// Usage: test_fork_register FORKS    (exit 0 when every child exited 0)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <thread>

#include "sonde/sonde.h"

namespace {

std::atomic<bool> g_stop{false};
std::atomic<long> g_registrar_rounds{0};

// GCC 12's AddressSanitizer allocator is not fork-safe: a child forked while
// another thread is inside malloc inherits the allocator's lock held and hangs
// on its first allocation (seen in CI; LLVM added ASan's own pthread_atfork
// handlers in 18, llvm-project PR 75290). glibc's malloc is fork-safe. Under
// ASan the registrar therefore takes libsonde's registry lock only on paths
// that do not allocate (a registered operation failing with a short cause);
// the release build runs the allocating registrations as well. The forks
// also wait until the registrar's thread (whose start allocates under ASan)
// and the writer have settled into that loop.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kNewOperations = 0;
#else
constexpr long kNewOperations = 20000;
#endif

// A new descriptor per call: every begin registers a new operation.
void run_new_operation(std::deque<sonde_op>& ops, std::deque<std::string>& names,
                       const std::string& name) {
  names.push_back(name);
  ops.push_back(sonde_op{});
  sonde_op& op = ops.back();
  op.name = names.back().c_str();
  sonde_begin(&op);
  sonde_end(&op);
}

}  // namespace

int main(int argc, char** argv) {
  const int forks = argc > 1 ? std::atoi(argv[1]) : 50;
  // The registrar takes the registry's lock all the time: first by
  // registering new operations (a bounded number: each stays registered),
  // then by failing an operation with causes, which are interned under the
  // same lock.
  std::thread registrar([] {
    std::deque<sonde_op> ops;
    std::deque<std::string> names;
    static sonde_op failing = SONDE_OP_INIT("registrar.failing");
    const std::string causes[] = {"timeout", "refused", "reset", "closed"};
    for (long i = 0; !g_stop.load(); ++i) {
      if (i < kNewOperations) {
        run_new_operation(ops, names, "registrar.op" + std::to_string(i));
      } else {
        sonde_begin(&failing);
        sonde_failed(&failing, causes[i % 4].c_str());
      }
      g_registrar_rounds.store(i + 1, std::memory_order_relaxed);
    }
  });
#if defined(__SANITIZE_ADDRESS__)
  while (g_registrar_rounds.load(std::memory_order_relaxed) < 1000) usleep(1000);
  usleep(50000);
#endif
  int failures = 0;
  for (int f = 0; f < forks; ++f) {
    pid_t pid = fork();
    if (pid == 0) {
      std::deque<sonde_op> ops;
      std::deque<std::string> names;
      for (int i = 0; i < 20; ++i) run_new_operation(ops, names, "child.op" + std::to_string(i));
      _exit(0);
    }
    int status = 0;
    bool hung = false;
    // A hung child is killed after 10 s and counts as a failure.
    for (int waited = 0; waited < 1000; ++waited) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      usleep(10000);
      if (waited == 999) {
        hung = true;
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
      }
    }
    if (hung) {
      std::fprintf(stderr, "child %d (fork %d) hung for 10 s and was killed\n", pid, f);
      ++failures;
    } else if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "child %d (fork %d) died of signal %d\n", pid, f, WTERMSIG(status));
      ++failures;
    } else if (WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "child %d (fork %d) exited %d\n", pid, f, WEXITSTATUS(status));
      ++failures;
    }
  }
  g_stop.store(true);
  registrar.join();
  std::printf("%d of %d children failed\n", failures, forks);
  return failures == 0 ? 0 : 1;
}
