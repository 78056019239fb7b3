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

// An example server (`binary --port P args...`) listening on a free port
// until destroyed; on another port when a parallel test's server took the
// first (port_owner.hpp). Its output goes to dir/<output>.
struct RunningServer {
  RunningServer(const fs::path& dir, const fs::path& binary, const std::vector<std::string>& args,
                const std::string& output) {
    for (int attempt = 1;; ++attempt) {
      port = diagnose::engine::free_loopback_port();
      std::vector<std::string> argv = {binary.string(), "--port", std::to_string(port)};
      argv.insert(argv.end(), args.begin(), args.end());
      process = std::make_unique<diagnose::engine::SystemUnderTest>(argv, (dir / output).string());
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

// The shop with 500 products and `flags`.
struct RunningShop : RunningServer {
  RunningShop(const fs::path& dir, std::vector<std::string> flags)
      : RunningServer(dir, kShopBinary, with_products(std::move(flags)), "shop-output.txt") {}
  static std::vector<std::string> with_products(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--products", "500"});
    return flags;
  }
};

// One HTTP/1.1 request to 127.0.0.1:port over a connection of its own
// (`body` as a form for POST); the whole response, status line included.
inline std::string http_exchange(int port, const std::string& method, const std::string& path,
                                 const std::string& body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  if (!body.empty())
    request += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    response.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return response;
}

// GET a path and return the body (the shop's /stats, a ledger statement).
inline std::string http_get(int port, const std::string& path) {
  const std::string response = http_exchange(port, "GET", path);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

inline diagnose::load::UsageProfile profile_of(const std::string& json) {
  return diagnose::load::UsageProfile::parse(json);
}

}  // namespace sonde::test
