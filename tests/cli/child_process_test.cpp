// `sonde run`'s child (src/cli/child_process.cpp, compiled into this test):
// signals are forwarded to the program while it runs, and no longer once it
// has ended, before its pid is freed for another process to take.
#include "cli/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::cli {
namespace {

TEST(ChildProcess, SignalsAreForwardedToTheRunningChildOnly) {
  Launch child = launch({"sh", "-c", "sleep 0.2; exit 3"});
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(child.exec_errno, 0);
  EXPECT_EQ(forwarding_to(), child.pid);
  const int status = wait_for_child(child.pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(forwarding_to(), 0) << "a signal now would go to a pid that is free again";
}

TEST(ChildProcess, AForwardedSignalEndsTheChildAndIsReported) {
  Launch child = launch({"sleep", "30"});
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);  // forwarded, not taken by this process
  const int status = wait_for_child(child.pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(forwarding_to(), 0);
}

}  // namespace
}  // namespace sonde::cli
