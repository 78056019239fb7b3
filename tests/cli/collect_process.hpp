// `sonde collect` and monitored programs as real processes, for the CLI
// collector tests: stderr captured in a file, waited for or signalled.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "sonde_cli_fixture.hpp"

extern char** environ;

namespace sonde::test {

inline const std::string kWorkload =
    std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_workload";

// A process with stderr captured in a file.
class Process {
 public:
  Process(std::vector<std::string> args, const fs::path& err) : err_(err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Process() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  // As wait(), for at most `limit`; -1 if it is still running then.
  int wait_for(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  std::string err() const { return slurp(err_); }

 private:
  fs::path err_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// `sonde collect --listen 127.0.0.1:0 ARGS`, waiting for its port.
class CollectProcess : public Process {
 public:
  // `command` replaces the plain `sonde collect --listen 127.0.0.1:0 ARGS`.
  CollectProcess(const fs::path& dir, std::vector<std::string> args,
                 std::vector<std::string> command = {})
      : Process(command.empty() ? with_listen(std::move(args)) : std::move(command),
                dir / "collect.err") {
    static const std::regex line(R"(listening on 127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 500 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = err();
      if (std::regex_search(text, m, line)) port_ = std::stoi(m[1]);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  int port() const { return port_; }

 private:
  static std::vector<std::string> with_listen(std::vector<std::string> args) {
    args.insert(args.begin(), {SONDE_CLI, "collect", "--listen", "127.0.0.1:0"});
    return args;
  }
  int port_ = 0;
};

inline nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace sonde::test
