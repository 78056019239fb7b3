// Shared by the load-driver and engine tests: the demo shop started on a
// free loopback port (no mocks: real process, real TCP), and temp dirs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "diagnose/engine/sut.hpp"
#include "diagnose/load/profile.hpp"
#include "http_client.hpp"

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

inline diagnose::load::UsageProfile profile_of(const std::string& json) {
  return diagnose::load::UsageProfile::parse(json);
}

}  // namespace sonde::test
