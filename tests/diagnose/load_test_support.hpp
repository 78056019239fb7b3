// Shared by the load-driver and engine tests: the demo shop started on a
// free loopback port (no mocks: real process, real TCP), and temp dirs.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "diagnose/engine/sut.hpp"
#include "diagnose/load/profile.hpp"

namespace sonde::test {

namespace fs = std::filesystem;

inline const fs::path kShopBinary = fs::path(SONDE_BINARY_DIR) / "examples" / "shop";
inline const fs::path kSondeBinary = fs::path(SONDE_BINARY_DIR) / "src" / "cli" / "sonde";

// A fresh directory per test, removed again when the test ends (kept when
// it failed, for a look).
struct ScratchDir {
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("sonde-" + name + "-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    if (!::testing::Test::HasFailure()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
  fs::path path;
};

inline std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream s(line);
  for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
  return fields;
}

// The shop with `flags`, listening on a free port until destroyed; on
// another port when a parallel test's server took the first (port_owner.hpp).
struct RunningShop {
  RunningShop(const fs::path& dir, std::vector<std::string> flags) {
    for (int attempt = 1;; ++attempt) {
      port = diagnose::engine::free_loopback_port();
      std::vector<std::string> argv = {kShopBinary.string(), "--port", std::to_string(port),
                                       "--products", "500"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      process = std::make_unique<diagnose::engine::SystemUnderTest>(
          argv, (dir / "shop-output.txt").string());
      try {
        process->wait_ready("127.0.0.1", port, 30);
        return;
      } catch (const diagnose::engine::PortTakenError&) {
        if (attempt == 3) throw;
      }
    }
  }
  int port = 0;
  std::unique_ptr<diagnose::engine::SystemUnderTest> process;
};

// GET a path on 127.0.0.1:port over a connection of its own and return the
// body (the shop's /stats, a ledger statement).
inline std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    response.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

inline diagnose::load::UsageProfile profile_of(const std::string& json) {
  return diagnose::load::UsageProfile::parse(json);
}

}  // namespace sonde::test
