// Hand-driven Kieker TCP clients for the collector tests: a log encoded as
// one connection's stream, and blocking loopback connect/send.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "format/kieker_tcp.hpp"
#include "format/record.hpp"

namespace sonde::collect {

class Encoder final : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    encoder_.encode(r, bytes);
    ++records;
    return true;
  }
  std::string bytes;
  uint64_t records = 0;

 private:
  format::kieker::TcpEncoder encoder_;
};

// A loopback client. `send_buffer` > 0 shrinks its send buffer: with a
// stream far larger, it cannot finish sending before the collector reads.
inline int connect_to(uint16_t port, int send_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (send_buffer > 0) {
    EXPECT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer), 0);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Sends everything, or stops quietly when the peer closed (returns false).
inline bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

inline const std::string kWorkload =
    std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_workload";

// Starts `processes` monitored workloads (tests/monitor/programs/workload.cpp,
// mode "throw") streaming to a collector on `port`; returns their pids.
inline std::vector<pid_t> spawn_workloads(uint16_t port, int processes, int threads, int iterations,
                                          int depth) {
  std::vector<pid_t> pids;
  EXPECT_TRUE(std::filesystem::exists(kWorkload))
      << kWorkload << " not built (target test_workload)";
  for (int p = 0; p < processes; ++p) {
    std::vector<std::string> args = {kWorkload, std::to_string(threads), std::to_string(iterations),
                                     std::to_string(depth), "throw"};
    std::vector<std::string> env = {"SONDE_WRITER=tcp", "SONDE_TCP_PORT=" + std::to_string(port),
                                    "SONDE_SUMMARY=false", "PATH=/usr/bin:/bin"};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    for (auto& e : env) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, kWorkload.c_str(), nullptr, nullptr, argv.data(), envp.data()), 0);
    if (pid > 0) pids.push_back(pid);
  }
  return pids;
}

// Waits for every pid; each must exit with status 0.
inline void expect_clean_exits(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

}  // namespace sonde::collect
