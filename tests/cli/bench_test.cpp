// `sonde bench --quick` end to end with tiny call counts: the result file's
// structure and the integrity counts (records written = records produced).
// Timings are printed by the command but never checked here.
#include <nlohmann/json.hpp>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

constexpr uint64_t kCalls = 2000;
constexpr uint64_t kDepth = 4;

// Everything sonde measures itself; the peers (LTTng, uftrace) are left out
// because they are installed only for benchmark runs.
const char* kConfigs =
    "T+I,T+I+C,T+I+C+W native,T+I+C+W kieker-bin,T+I+C+W kieker-dat,T+I+C+W tcp,"
    "T+I+C+W+R collect,T+I+C+W+R+D collect --reduce,T+I+C+W kieker-tcp,"
    "T+I+C+W+R collect kieker-tcp,"
    "auto: no-op hooks,auto: sonde null,auto: sonde native,auto: sonde xray native";

class BenchCli : public SondeCli {};

TEST_F(BenchCli, QuickRunWritesEveryConfigurationWithItsCounts) {
  const fs::path json_path = dir_ / "bench.json";
  const fs::path csv_path = dir_ / "bench.csv";
  const CliRun run =
      sonde({"bench", "--quick", "--loops", "1", "--calls", std::to_string(kCalls), "--depth",
             std::to_string(kDepth), "--only", kConfigs, "--json", json_path.string(), "--csv",
             csv_path.string(), "--svg-dir", (dir_ / "svg").string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_TRUE(j["machine"].contains("cpu_model"));
  EXPECT_TRUE(j["machine"].contains("tsc_invariant"));
  ASSERT_EQ(j["points"].size(), 1u);
  const nlohmann::json point = j["points"][0];
  EXPECT_EQ(point["workload"]["calls"], kCalls);
  const nlohmann::json configs = point["configurations"];
  ASSERT_EQ(configs.size(), 15u);  // T plus the fourteen named

  // Each call is one trace: TraceMetadata + depth Before + depth After.
  const uint64_t produced = kCalls * (2 * kDepth + 1);
  const uint64_t timed = kCalls / 2;  // the default warm-up discards half
  int writing = 0;
  bool xray_ran = false;  // only where clang++ with its XRay runtime built the program
  for (const auto& c : configs) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    if (c.contains("skipped")) {
      EXPECT_EQ(name, "auto: sonde xray native");
      EXPECT_NE(c["skipped"].get<std::string>().find("XRay"), std::string::npos);
      continue;
    }
    if (name == "auto: sonde xray native") xray_ran = true;
    EXPECT_EQ(c["summary"]["n"], timed);
    EXPECT_GT(c["median_ns"].get<double>(), 0.0);
    EXPECT_GT(c["mean_ns"].get<double>(), 0.0);
    EXPECT_EQ(c["loop_means_ns"].size(), 1u);
    EXPECT_TRUE(c["errors"].empty());
    if (c["writes"].get<bool>()) {
      ++writing;
      EXPECT_EQ(c["records_produced"], produced);
      EXPECT_EQ(c["records_written"], produced);
      EXPECT_EQ(c["events_dropped"], 0u);
      EXPECT_GT(c["bytes_per_event"].get<double>(), 0.0);
    }
    if (name == "T+I+C+W+R collect" || name == "T+I+C+W+R+D collect --reduce" ||
        name == "T+I+C+W+R collect kieker-tcp") {
      // The collector reconstructed every call's trace live, none invalid.
      EXPECT_EQ(c["traces_expected"], kCalls);
      EXPECT_EQ(c["traces_reconstructed"], kCalls);
      EXPECT_EQ(c["traces_invalid"], 0u);
      if (name != "T+I+C+W+R+D collect --reduce") {
        EXPECT_EQ(c["reduced_traces"], 0u);
      } else {
        // Every call has the same shape: a few windows' worth of rows.
        EXPECT_GT(c["reduced_traces"].get<uint64_t>(), 0u);
        EXPECT_LT(c["reduced_traces"].get<uint64_t>(), kCalls);
      }
    } else {
      EXPECT_FALSE(c.contains("traces_reconstructed"));
    }
    if (name == "T+I" || c["group"] != "sonde") {
      EXPECT_EQ(c["events_recorded"], 0u);  // deactivated, or no libsonde at all
    } else {
      // An enter and an exit per level, and a trace start per call.
      EXPECT_EQ(c["events_recorded"], kCalls * (2 * kDepth + 1));
    }
  }
  // native, kieker-bin, kieker-dat, tcp, collect, collect --reduce, kieker-tcp, collect
  // kieker-tcp, automatic native (and XRay native)
  EXPECT_EQ(writing, xray_ran ? 10 : 9);
  EXPECT_TRUE(point["decomposition"].contains("I_ns"));
  EXPECT_TRUE(point["decomposition"].contains("C_ns"));
  EXPECT_EQ(point["decomposition"]["W_ns"].size(), 5u);
  EXPECT_TRUE(point["decomposition"].contains("R_ns"));
  EXPECT_TRUE(point["decomposition"].contains("R_kieker_tcp_ns"));
  EXPECT_TRUE(point["decomposition"].contains("D_ns"));

  const std::string csv = slurp(csv_path);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 16);  // header + 15 rows
  EXPECT_TRUE(fs::exists(dir_ / "svg" / "icw.svg"));
  EXPECT_NE(run.out.find("T+I+C+W native"), std::string::npos);
}

TEST_F(BenchCli, UnknownExperimentIsAUsageError) {
  const CliRun run = sonde({"bench", "--quick", "--experiment", "warp-speed"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown experiment 'warp-speed'"), std::string::npos) << run.err;
}

TEST_F(BenchCli, MissingBenchmarkBinariesAreNamed) {
  const CliRun run = sonde({"bench", "--quick", "--bench-dir", (dir_ / "nowhere").string()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("MooBench binaries are not in"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sonde::test
