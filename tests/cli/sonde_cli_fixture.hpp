// Shared fixture for tests that run the built `sonde` binary: a fresh
// temporary directory per test and a runner that captures exit status,
// stdout and stderr (through files, no shell).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace sonde::test {

namespace fs = std::filesystem;

inline const fs::path kKieker = fs::path(SONDE_TESTDATA_DIR) / "kieker";

struct CliRun {
  int exit_code = -1;  // or 128 + signal if sonde was killed
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p);

class SondeCli : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // sonde ARGS...
  CliRun sonde(std::vector<std::string> args);

  fs::path dir_;
};

}  // namespace sonde::test
