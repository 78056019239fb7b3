// `sonde cull LOG`: the culling rule on a recorded log of test_cull
// (tests/monitor/programs/cull_program.cpp: a hot tiny helper and a slow
// request). The patterns it writes must exclude exactly the helper, and a
// run with them must record the requests without it.
#include <filesystem>
#include <string>
#include <vector>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

const std::string kCullTestProgram =
    std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_cull";

class SondeCull : public SondeCli {
 protected:
  // A log of `requests` requests (1000 helper calls each), nothing culled.
  std::string record(const std::string& name, std::vector<std::string> extra = {}) {
    const std::string out = (dir_ / name).string();
    std::vector<std::string> args = {"run", "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", kCullTestProgram, "300", "nowait"});
    const CliRun r = sonde(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }
};

TEST_F(SondeCull, WritesPatternsThatExcludeOnlyTheHotHelper) {
  const std::string log = record("log");
  const std::string patterns = (dir_ / "patterns.txt").string();
  CliRun r = sonde({"cull", log, "--out", patterns});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Excluded 1 of 2 operations (300,000 of 300,300 calls"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("helper(unsigned int)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Predicted probe cost"), std::string::npos) << r.out;
  const std::string text = slurp(patterns);
  EXPECT_NE(text.find("\n-helper(unsigned int)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n-request"), std::string::npos) << text;
  EXPECT_NE(text.find("# kept"), std::string::npos) << text;

  // The next run with these patterns records every request and no helper.
  const std::string log2 = record("log2", {"--set", "patterns_file=" + patterns});
  r = sonde({"summary", log2, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("helper"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("request(unsigned int, int)\",300,"), std::string::npos) << r.out;
}

TEST_F(SondeCull, PrintsThePatternsWithoutOutAndHonoursKeepAndThresholds) {
  const std::string log = record("log");
  CliRun r = sonde({"cull", log});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n-helper(unsigned int)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Excluded 1 of 2 operations"), std::string::npos) << r.err;

  r = sonde({"cull", log, "--keep", "help*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("\n-helper"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("kept by --keep: helper(unsigned int)"), std::string::npos) << r.err;

  // Nothing is shorter than 1 ns, and nothing is called 300,001 times.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--max-ns", "1"}, {"--min-calls", "300001"}}) {
    std::vector<std::string> args = {"cull", log};
    args.insert(args.end(), extra.begin(), extra.end());
    r = sonde(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("Excluded 0 of 2 operations"), std::string::npos) << extra[0] << r.err;
    EXPECT_EQ(r.out.find("\n-"), std::string::npos) << r.out;
  }
}

// `sonde run --cull` (needs libsonde's culling wired into its writer loop
// and hooks): the program waits for the report, then runs its requests
// with the helper culled; sonde points to the report.
TEST_F(SondeCull, RunCullPointsToTheReport) {
  const std::string out = (dir_ / "culled").string();
  const CliRun r = sonde({"run", "--cull", "--set", "cull_phase_calls=100000", "--out", out, "--",
                          kCullTestProgram, "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.err.find("sonde: cull report written to ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string path = r.err.substr(at + 30, r.err.find(' ', at + 30) - at - 30);
  EXPECT_NE(slurp(path).find("\n-helper(unsigned int)\n"), std::string::npos) << path;
  // Listed as the report, not as a log.
  EXPECT_EQ(r.err.find("log written to " + path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sonde: cull: 1 functions excluded"), std::string::npos) << r.err;
}

// Across runs: a --cull run remembers what it culled for this build of
// the program, and the next --cull run starts with it excluded.
TEST_F(SondeCull, ASecondRunStartsWithWhatTheFirstCulled) {
  const fs::path cache = dir_ / "cull-cache";  // SONDE_CULL_CACHE (the fixture)
  const std::string first = (dir_ / "first").string();
  CliRun r = sonde({"run", "--cull", "--set", "cull_phase_calls=100000", "--out", first, "--",
                    kCullTestProgram, "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("starting with"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sonde: cull: 1 functions remembered for the next --cull run of " +
                       kCullTestProgram + " (1 new; " + cache.string() + "/build-id-"),
            std::string::npos)
      << r.err;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(cache)) files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(slurp(files[0]).find("\n-helper(unsigned int)\n"), std::string::npos);

  // No first phase now: the helper is excluded from its first call.
  const std::string second = (dir_ / "second").string();
  r = sonde({"run", "--cull", "--out", second, "--", kCullTestProgram, "100", "nowait"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sonde: cull: starting with 1 functions culled in earlier runs of this "
                       "build (" +
                       files[0].string()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("functions remembered for the next --cull run of " + kCullTestProgram +
                       " (0 new;"),
            std::string::npos)
      << r.err;
  r = sonde({"summary", second, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("helper"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("request(unsigned int, int)\",100,"), std::string::npos) << r.out;

  // The run's own rules decide over the remembered ones: a pin keeps the
  // helper traced, every call of it.
  const std::string pinned = (dir_ / "pinned").string();
  r = sonde({"run", "--cull", "--set", "patterns=+helper*", "--out", pinned, "--", kCullTestProgram,
             "100", "nowait"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("starting with 1 functions"), std::string::npos) << r.err;
  r = sonde({"summary", pinned, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("helper(unsigned int),100000,"), std::string::npos) << r.out;

  // --no-cull-cache: neither read nor written.
  const auto before = fs::last_write_time(files[0]);
  r = sonde({"run", "--cull", "--no-cull-cache", "--out", (dir_ / "fresh").string(), "--",
             kCullTestProgram, "100", "nowait"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("starting with"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("remembered"), std::string::npos) << r.err;
  EXPECT_EQ(fs::last_write_time(files[0]), before);
}

TEST_F(SondeCull, UsageErrorsAndUnreadableLogs) {
  EXPECT_EQ(sonde({"cull"}).exit_code, 2);
  EXPECT_EQ(sonde({"cull", dir_.string(), "--max-ns", "abc"}).exit_code, 2);
  EXPECT_EQ(sonde({"cull", dir_.string(), "--probe-ns", "0"}).exit_code, 2);
  const CliRun r = sonde({"cull", (dir_ / "missing").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test
