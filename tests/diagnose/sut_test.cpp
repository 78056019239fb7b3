// The system under test outlives nothing: an engine killed outright (no
// chance to stop what it started) takes its SUT with it.
#include "diagnose/engine/sut.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace sonde::test {
namespace {

namespace engine = sonde::diagnose::engine;

// True while `pid` is a live process (not gone, not a zombie nobody reaped).
bool sut_process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

TEST(SystemUnderTest, DiesWithAnEngineKilledOutright) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sonde-sut-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int pid_pipe[2];
  ASSERT_EQ(::pipe(pid_pipe), 0);
  const pid_t fake_engine = ::fork();
  ASSERT_GE(fake_engine, 0);
  if (fake_engine == 0) {
    ::close(pid_pipe[0]);
    pid_t sut_pid = -1;
    try {
      auto* sut = new engine::SystemUnderTest({"sleep", "60"}, (dir / "sut-output.txt").string());
      sut_pid = sut->pid();  // never stopped: this process is SIGKILLed
    } catch (...) {
    }
    [[maybe_unused]] ssize_t w = ::write(pid_pipe[1], &sut_pid, sizeof sut_pid);
    for (;;) ::pause();
  }
  ::close(pid_pipe[1]);
  pid_t sut_pid = -1;
  const ssize_t got = ::read(pid_pipe[0], &sut_pid, sizeof sut_pid);
  ::close(pid_pipe[0]);
  const bool alive_before = sut_pid > 0 && sut_process_alive(sut_pid);
  // Killed before any assertion can return: a fake engine left in pause()
  // would hold ctest's output open until the timeout.
  ::kill(fake_engine, SIGKILL);
  int status = 0;
  ::waitpid(fake_engine, &status, 0);
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof sut_pid));
  ASSERT_GT(sut_pid, 0) << "the SUT did not start";
  EXPECT_TRUE(alive_before);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sut_process_alive(sut_pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool left_behind = sut_process_alive(sut_pid);
  if (left_behind) ::kill(sut_pid, SIGKILL);
  EXPECT_FALSE(left_behind) << "the SUT " << sut_pid << " outlived its killed engine";
  std::filesystem::remove_all(dir);
}

// After sonde's own SIGINT, ending by it (or `sonde run`'s 130 = 128 +
// SIGINT, 143 for SIGTERM) is the stop that was asked for, not an error.
TEST(SystemUnderTest, AStopSondeAskedForReadsAsANormalStop) {
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(130, 0), SIGINT), "stopped (SIGINT, as asked)");
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(143, 0), SIGINT), "stopped (SIGTERM, as asked)");
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(0, SIGINT), SIGINT), "stopped (SIGINT, as asked)");
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(0, 0), SIGINT), "stopped (exit status 0, as asked)");
  // Not asked: the same statuses are what happened to it.
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(130, 0)), "exited with status 130");
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(0, SIGINT)).rfind("was killed by signal 2 (", 0), 0u);
  // Asked, but it failed or crashed: still said as it is.
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(3, 0), SIGINT), "exited with status 3");
  EXPECT_EQ(engine::describe_exit(W_EXITCODE(0, SIGSEGV), SIGINT)
                .rfind("was killed by signal " + std::to_string(SIGSEGV), 0),
            0u);

  // A real one: sleep ends by the SIGINT stop() sends.
  const auto dir =
      std::filesystem::temp_directory_path() / ("sonde-sut-stop-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    engine::SystemUnderTest sut({"sleep", "60"}, (dir / "sut-output.txt").string());
    EXPECT_EQ(sut.stop(10), "stopped (SIGINT, as asked)");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sonde::test
