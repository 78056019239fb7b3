// Runs the built `sonde serve` as a process and stops it with a signal at
// once, while it still loads the log: the stop must not be lost (httplib's
// stop() does nothing before the server listens), so it exits by itself.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>

#include "collect_process.hpp"

namespace sonde::test {
namespace {

// Waits at most `limit` for `pid`; the exit status, or -1 if still running.
int wait_for(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

TEST_F(SondeCli, ServeStoppedWhileItStartsExitsByItself) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  // Delays in small steps, to land in the window between the signal thread's
  // start and the server's listening in some of the runs.
  for (int delay_ms = 0; delay_ms <= 40; delay_ms += 2) {
    SCOPED_TRACE("SIGTERM after " + std::to_string(delay_ms) + " ms");
    pid_t pid = 0;
    std::vector<std::string> args = {SONDE_CLI, "serve", log, "--listen", "127.0.0.1:0"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGTERM);
    const int status = wait_for(pid, std::chrono::seconds(20));
    if (status < 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    // 0: it stopped by itself; 143: the signal came before it set its handling up.
    EXPECT_TRUE(status == 0 || status == 128 + SIGTERM) << "exit status " << status;
  }
}

}  // namespace
}  // namespace sonde::test
