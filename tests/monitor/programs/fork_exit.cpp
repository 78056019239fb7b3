// Forked children that end with _exit or _Exit, as a forking server's
// children do: atexit does not run in them. Each child records CALLS
// operations, then ends with _exit (even children) or _Exit (odd ones), half
// of them from inside a signal handler (the async-signal-safe way out).
// Usage: test_fork_exit CHILDREN CALLS    (exit 0 when every child exited 0)
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "sonde/sonde.h"

namespace {

sonde_op g_child_op = SONDE_OP_INIT("child.work");
sonde_op g_parent_op = SONDE_OP_INIT("parent.work");
int g_use_capital_exit = 0;

void exit_from_handler(int) {
  if (g_use_capital_exit) _Exit(0);
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const int children = argc > 1 ? std::atoi(argv[1]) : 4;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 100;
  sonde_begin(&g_parent_op);
  sonde_end(&g_parent_op);
  int failures = 0;
  for (int c = 0; c < children; ++c) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < calls; ++i) {
        sonde_begin(&g_child_op);
        sonde_end(&g_child_op);
      }
      g_use_capital_exit = c % 2;
      if ((c / 2) % 2 == 1) {
        std::signal(SIGUSR1, exit_from_handler);
        raise(SIGUSR1);
      }
      if (g_use_capital_exit) _Exit(0);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "child %d ended with status %d\n", c, status);
      ++failures;
    }
  }
  std::printf("%d of %d children failed\n", failures, children);
  return failures == 0 ? 0 : 1;
}
