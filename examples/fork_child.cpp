// Demonstrates fork(): parent and child both make probed calls after the
// fork; with the default fork=follow the child writes its own log, named
// with its own pid. The child ends with exit() (not _exit) so that its log is
// flushed like any process's at exit.
//
//   example_fork [parent_calls=20] [child_calls=10]
//
// Call counts: prepare 1 (parent's log, before the fork); parent_work P in the
// parent's log; child_work C in the child's log. Exits with the child's status.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sonde/sonde.hpp>

namespace {

long prepare() {
  SONDE_SCOPE_NAMED("prepare");
  return 1;
}

long parent_work(int i) {
  SONDE_SCOPE_NAMED("parent_work");
  return i * 3L;
}

long child_work(int i) {
  SONDE_SCOPE_NAMED("child_work");
  return i * 5L;
}

}  // namespace

int main(int argc, char** argv) {
  const int parent_calls = argc > 1 ? std::atoi(argv[1]) : 20;
  const int child_calls = argc > 2 ? std::atoi(argv[2]) : 10;
  long sum = prepare();
  std::fflush(stdout);  // nothing buffered may be printed twice

  pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  if (child == 0) {
    for (int i = 0; i < child_calls; ++i) sum += child_work(i);
    std::exit(sum > 0 ? 0 : 1);
  }
  for (int i = 0; i < parent_calls; ++i) sum += parent_work(i);
  int status = 0;
  if (waitpid(child, &status, 0) != child) {
    std::perror("waitpid");
    return 1;
  }
  const int child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("fork: parent %d calls, child %d calls (pid %d, status %d)\n", parent_calls,
              child_calls, static_cast<int>(child), child_status);
  return child_status;
}
