// Kieker's real logs converted to native and back keep every record, byte
// for byte in the .dat lines.
#include "format/convert.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sonde::format {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> dat_lines(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".dat") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> lines;
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  return lines;
}

std::string scratch(const std::string& name) {
  fs::path p = fs::path(SONDE_BINARY_DIR) / "test-output" / "convert" / name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p.string();
}

class ConvertRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvertRoundTrip, KiekerToNativeToKiekerKeepsEveryLine) {
  std::string original = std::string(SONDE_TESTDATA_DIR) + "/kieker/" + GetParam() + "/log";
  std::string native = scratch(GetParam() + ".sonde");
  std::string back = scratch(GetParam() + "-back");
  ConvertResult to_native = convert_log(original, OutputFormat::kNative, native);
  ASSERT_TRUE(to_native.ok()) << (to_native.read.errors.empty() ? to_native.error
                                                                : to_native.read.errors[0]);
  ConvertResult to_kieker = convert_log(native, OutputFormat::kKiekerDat, back);
  ASSERT_TRUE(to_kieker.ok()) << to_kieker.error;
  EXPECT_EQ(to_native.written, to_kieker.written);
  std::vector<std::string> expected = dat_lines(original);
  std::vector<std::string> actual = dat_lines(back);
  ASSERT_EQ(actual.size(), expected.size());
  // Type ids may be numbered differently; compare with ids mapped to class names.
  auto map_of = [](const std::string& dir) {
    std::map<std::string, std::string> m;
    std::ifstream in(dir + "/kieker.map");
    std::string line;
    while (std::getline(in, line)) {
      size_t eq = line.find('=');
      if (eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
  };
  auto a = map_of(original), b = map_of(back);
  for (size_t i = 0; i < expected.size(); ++i) {
    auto resolve = [](const std::string& line, std::map<std::string, std::string>& m) {
      size_t semi = line.find(';');
      return m[line.substr(0, semi)] + line.substr(semi);
    };
    ASSERT_EQ(resolve(actual[i], b), resolve(expected[i], a)) << "line " << i + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(RealLogs, ConvertRoundTrip,
                         ::testing::Values("bookstore-oer-2010", "events-2014",
                                           "events-2017-singleton"));

TEST(Convert, MissingInputIsAnErrorNamingIt) {
  ConvertResult r =
      convert_log("/nonexistent/log", OutputFormat::kNative, scratch("missing.sonde"));
  EXPECT_FALSE(r.ok());
  ASSERT_FALSE(r.read.errors.empty());
  EXPECT_NE(r.read.errors[0].find("/nonexistent/log"), std::string::npos);
}

}  // namespace
}  // namespace sonde::format
