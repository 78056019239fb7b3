// Shared by the load-driver and engine tests: the demo shop started on a
// free loopback port (no mocks: real process, real TCP), and temp dirs.
#pragma once

#include <gtest/gtest.h>
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

inline diagnose::load::UsageProfile profile_of(const std::string& json) {
  return diagnose::load::UsageProfile::parse(json);
}

}  // namespace sonde::test
