// `sonde diagnose --config`: experiments run against the real demo shop
// (started under `sonde run` by the engine), then evaluated. Whether a
// problem is detected depends on timing on a loaded machine, so this checks
// the run's structure and that every hierarchy node is accounted for; the
// heuristics' decisions are tested on planted data in tests/diagnose.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

using nlohmann::json;

json read_json_file(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

void count_nodes(const json& node, std::map<std::string, int>& statuses, int& nodes) {
  ++nodes;
  ++statuses[node.at("status").get<std::string>()];
  for (const json& c : node.value("children", json::array())) count_nodes(c, statuses, nodes);
}

class DiagnoseRun : public SondeCli {
 protected:
  // The shop with a one-lane bridge, a single-user test and a two-step
  // scaling series, half a second each.
  fs::path write_config(const json& extra = json::object()) {
    std::ofstream(dir_ / "profile.json")
        << R"({"requests": [{"name": "GET /product", "path": "/product?id={random:1:300}"}]})";
    json config = {
        {"sut",
         {{"command",
           {std::string(SONDE_BINARY_DIR) + "/examples/shop", "--port", "{port}", "--products",
            "300", "--one-lane-bridge"}},
          {"sonde", std::string(SONDE_BINARY_DIR) + "/src/cli/sonde"},
          {"reload_ms", 50}}},
        {"profile", (dir_ / "profile.json").string()},
        {"max_users", 2},
        // No stability wait (engine_run_test covers it): short experiments.
        {"durations",
         {{"ramp_up_s", 0.1}, {"stable_s", 0.5}, {"cool_down_s", 0.1}, {"stability_max_s", 0}}},
        {"requirements", {{"default", {{"threshold_ms", 5}, {"percentile", 0.9}}}}},
        {"experiments",
         {{{"kind", "single_user"}, {"probes", {"response_time", "database"}}},
          {{"kind", "scaling"}, {"steps", 2}, {"probes", {"response_time", "lock_wait"}}}}}};
    config.merge_patch(extra);
    const fs::path path = dir_ / "config.json";
    std::ofstream(path) << config.dump(2);
    return path;
  }
};

TEST_F(DiagnoseRun, RunsTheExperimentsThenReportsEveryNode) {
  const fs::path out = dir_ / "out";
  const CliRun r = sonde({"diagnose", "--config", write_config().string(), "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The experiments of the config, in the contract's layout.
  const json run = read_json_file(out / "data" / "run.json");
  EXPECT_EQ(run.at("status"), "complete") << run.dump(2);
  std::set<std::string> experiments;
  for (const auto& e : fs::directory_iterator(out / "data" / "experiments"))
    experiments.insert(e.path().filename().string());
  EXPECT_EQ(experiments, (std::set<std::string>{"single-u1", "scaling-s1-u1", "scaling-s2-u2"}));
  // The report: every node of the default hierarchy, each with a status.
  const json report = read_json_file(out / "report.json");
  const json& root = report.contains("root") ? report.at("root") : report;
  std::map<std::string, int> statuses;
  int nodes = 0;
  count_nodes(root, statuses, nodes);
  EXPECT_EQ(nodes, 15);
  for (const auto& [status, n] : statuses)
    EXPECT_TRUE(status == "detected" || status == "not_detected" || status == "skipped" ||
                status == "not_evaluated")
        << status;
  // The requirement came from the environment config (5 ms at P90).
  EXPECT_NE(root.dump().find("required 5 ms"), std::string::npos) << root.dump(2);
  EXPECT_TRUE(fs::exists(out / "report.html"));
  EXPECT_NE(r.out.find("report: " + (out / "report.html").string()), std::string::npos) << r.out;
}

// Without an "experiments" list the systematic search decides what runs:
// the root's load test, then a level's experiments only once its parent
// is detected.
std::set<std::string> experiment_ids(const fs::path& data) {
  std::set<std::string> ids;
  for (const auto& e : fs::directory_iterator(data / "experiments"))
    ids.insert(e.path().filename().string());
  return ids;
}

const json* find_node(const json& node, const std::string& id) {
  if (node.at("id") == id) return &node;
  if (!node.contains("children")) return nullptr;
  for (const json& c : node.at("children"))
    if (const json* f = find_node(c, id)) return f;
  return nullptr;
}

TEST_F(DiagnoseRun, SearchStopsAfterTheLoadTestWithoutAProblem) {
  const fs::path out = dir_ / "out";
  json command = {std::string(SONDE_BINARY_DIR) + "/examples/shop", "--port", "{port}",
                  "--products", "300"};
  // An earlier run into the same --out left an experiment this one does
  // not plan (and an unreadable one): it must not count as this run's.
  fs::create_directories(out / "data" / "experiments" / "scaling-s9-u99");
  std::ofstream(out / "data" / "experiments" / "scaling-s9-u99" / "experiment.json") << "{";
  const CliRun r =
      sonde({"diagnose", "--config",
             write_config(
                 {{"experiments", nullptr},
                  {"sut", {{"command", command}}},
                  {"requirements", {{"default", {{"threshold_ms", 5000}, {"percentile", 0.9}}}}}})
                 .string(),
             "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(experiment_ids(out / "data"), (std::set<std::string>{"load-u2"}));
  EXPECT_NE(r.err.find("removing the experiments of an earlier run"), std::string::npos) << r.err;
  const json report = read_json_file(out / "report.json");
  const json& root = report.contains("root") ? report.at("root") : report;
  EXPECT_EQ(root.at("status"), "not_detected") << root.dump(2);
  std::map<std::string, int> statuses;
  int nodes = 0;
  count_nodes(root, statuses, nodes);
  EXPECT_EQ(statuses["skipped"], nodes - 1) << "every node below the root";
}

TEST_F(DiagnoseRun, SearchRunsTheNextLevelsExperimentsWhenTheParentIsDetected) {
  // Every request violates 1 microsecond: a performance problem, whose
  // children include the Ramp (its single-user windows between load
  // phases) and, through Continuously Violated Requirements, the Traffic
  // Jam (the scaling series, here 2 steps).
  const fs::path out = dir_ / "out";
  const CliRun r =
      sonde({"diagnose", "--config",
             write_config(
                 {{"experiments", nullptr},
                  {"scaling_steps", 2},
                  {"requirements", {{"default", {{"threshold_ms", 0.001}, {"percentile", 0.9}}}}}})
                 .string(),
             "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> ids = experiment_ids(out / "data");
  for (const char* id : {"load-u2", "ramp-w1", "ramp-w2", "ramp-w3", "ramp-w4"})
    EXPECT_EQ(ids.count(id), 1u) << id << " of " << json(ids).dump();
  const json report = read_json_file(out / "report.json");
  const json& root = report.contains("root") ? report.at("root") : report;
  ASSERT_EQ(root.at("status"), "detected") << root.dump(2);
  const json* ramp = find_node(root, "the_ramp");
  ASSERT_NE(ramp, nullptr);
  EXPECT_NE(ramp->at("status"), "not_evaluated") << ramp->dump(2);
  const json* cvr = find_node(root, "continuously_violated_requirements");
  ASSERT_NE(cvr, nullptr);
  if (cvr->at("status") == "detected") {
    EXPECT_EQ(ids.count("scaling-s2-u2"), 1u) << json(ids).dump();
  } else {
    EXPECT_EQ(ids.count("scaling-s2-u2"), 0u) << json(ids).dump();
  }
  EXPECT_NE(r.err.find("ETA at most"), std::string::npos) << r.err;
}

TEST_F(DiagnoseRun, BadConfigKeyIsNamedAndNothingRuns) {
  const fs::path out = dir_ / "out";
  const CliRun r = sonde(
      {"diagnose", "--config", write_config({{"max_userz", 3}}).string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("max_userz"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "data" / "experiments"));
}

// The system under test is killed (SIGKILL, as by the OOM killer) in the
// middle of an experiment: the run stops at once with a message naming it,
// the report is written and marked incomplete, and the exit status says so.
TEST_F(DiagnoseRun, SutKilledMidExperimentGivesAnIncompleteReport) {
  const fs::path out = dir_ / "out";
  const fs::path pid_file = dir_ / "shop.pid";
  json command = {std::string(SONDE_BINARY_DIR) + "/examples/shop",
                  "--port",
                  "{port}",
                  "--products",
                  "300",
                  "--pid-file",
                  pid_file.string()};
  // One long experiment, so the kill surely lands inside it.
  const fs::path config =
      write_config({{"sut", {{"command", command}}},
                    {"durations", {{"stable_s", 60}}},
                    {"experiments", json::array({{{"kind", "load"}, {"users", 2}}})}});
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    for (int i = 0; i < 600 && !fs::exists(pid_file); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(pid_file);
    pid_t pid = 0;
    if (!(in >> pid) || pid <= 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // load is running
    killed = ::kill(pid, SIGKILL) == 0;
  });
  const CliRun r = sonde({"diagnose", "--config", config.string(), "--out", out.string()});
  killer.join();
  ASSERT_TRUE(killed) << "the shop never wrote its pid file: " << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("the system under test (shop) was killed by signal 9"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("during the experiment"), std::string::npos) << r.err;
  const json report = read_json_file(out / "report.json");
  EXPECT_EQ(report.at("complete"), false);
  EXPECT_NE(report.at("incomplete_reason").get<std::string>().find("(shop)"), std::string::npos)
      << report.dump(2);
  EXPECT_TRUE(fs::exists(out / "report.html"));
  const json experiment =
      read_json_file(out / "data" / "experiments" / "load-u2" / "experiment.json");
  EXPECT_EQ(experiment.at("status"), "failed");
}

// `cd DIR && sonde diagnose --config config.json` with "./bank" as the
// command: the config's folder must become absolute, or "./bank" becomes
// "bank", which `sonde run` then looks for on PATH ("cannot execute 'bank'").
TEST_F(DiagnoseRun, RelativeConfigPathFindsTheProgramBesideIt) {
  fs::create_symlink(fs::path(SONDE_BINARY_DIR) / "examples" / "shop", dir_ / "bank");
  const fs::path config = write_config(
      {{"sut", {{"command", {"./bank", "--port", "{port}", "--products", "300"}}}},
       {"profile", "profile.json"},
       {"experiments", json::array({{{"kind", "single_user"}, {"probes", {"response_time"}}}})}});
  // sonde inherits the test's working directory; restored before TearDown
  // removes dir_.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  const CliRun r = sonde({"diagnose", "--config", config.filename().string(), "--out", "out"});
  fs::current_path(cwd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json_file(dir_ / "out" / "data" / "run.json").at("status"), "complete");
  EXPECT_EQ(experiment_ids(dir_ / "out" / "data"), (std::set<std::string>{"single-u1"}));
}

// scenarios/run.sh --repeat N leaves OUT/rep1..N; --accuracy --repetitions
// scores each and gives the mean and the worst per node (exit 4: a wrong
// label in some repetition).
TEST_F(DiagnoseRun, AccuracyOverRepetitionsGivesTheWorstPerNode) {
  const fs::path cases = dir_ / "cases.txt";
  std::ofstream(cases) << "tc01 | No problem | none | - | performance_problem\n";
  auto report = [&](const std::string& rep, const std::string& status) {
    fs::create_directories(dir_ / "reps" / rep / "tc01");
    std::ofstream(dir_ / "reps" / rep / "tc01" / "report.json")
        << R"({"complete": true, "root": {"id": "performance_problem", "status": ")" << status
        << R"(", "children": []}})";
  };
  report("rep1", "not_detected");
  report("rep2", "detected");
  const CliRun r = sonde({"diagnose", "--accuracy", cases.string(), "--out",
                          (dir_ / "reps").string(), "--repetitions"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.out.find("Repeated fresh runs: 2 (rep1, rep2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.500    0.000  rep2: tc01 (false alarm)"), std::string::npos) << r.out;
  // A kept series may start later (scenarios/keep_labels.py) and leave
  // gaps: every repN present counts, in the order of N (rep10 after rep3).
  fs::rename(dir_ / "reps" / "rep1", dir_ / "reps" / "rep10");
  report("rep3", "not_detected");
  std::ofstream(dir_ / "reps" / "replay.txt") << "not a repetition\n";
  const CliRun gaps = sonde({"diagnose", "--accuracy", cases.string(), "--out",
                             (dir_ / "reps").string(), "--repetitions"});
  EXPECT_EQ(gaps.exit_code, 4) << gaps.err;
  EXPECT_NE(gaps.out.find("Repeated fresh runs: 3 (rep2, rep3, rep10)"), std::string::npos)
      << gaps.out;
  const CliRun none = sonde({"diagnose", "--accuracy", cases.string(), "--out",
                             (dir_ / "nothing").string(), "--repetitions"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("rep1"), std::string::npos) << none.err;
}

TEST_F(DiagnoseRun, ConfigOrDataButNotBoth) {
  EXPECT_EQ(sonde({"diagnose", "--out", (dir_ / "o").string()}).exit_code, 2);
  EXPECT_EQ(sonde({"diagnose", "--config", "c.json", "--data", "d", "--out", "o"}).exit_code, 2);
}

}  // namespace
}  // namespace sonde::test

namespace sonde::test {
namespace {

TEST_F(SondeCli, DemoWithoutItsShopSaysHowToBuildIt) {
  const CliRun r = sonde({"demo", "--quick", "--out", (dir_ / "demo").string(), "--shop",
                          (dir_ / "no-such-shop").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("demo shop is not built"), std::string::npos) << r.err;
}

// --requirement-ms sets every service's P90 threshold in the config the
// demo writes (a shop that exits at once: only the config is checked).
TEST_F(SondeCli, DemoWritesTheRequirementItWasGiven) {
  const fs::path out = dir_ / "demo";
  const CliRun r = sonde({"demo", "--quick", "--problems", "none", "--requirement-ms", "5",
                          "--shop", "/bin/false", "--out", out.string()});
  EXPECT_NE(r.exit_code, 0) << r.err;
  const json requirement = read_json_file(out / "config.json").at("requirements").at("default");
  EXPECT_EQ(requirement.at("threshold_ms"), 5.0);
  EXPECT_EQ(requirement.at("percentile"), 0.9);
}

TEST_F(SondeCli, DemoRejectsARequirementThatIsNotPositive) {
  const CliRun r = sonde({"demo", "--requirement-ms", "0", "--out", (dir_ / "d").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--requirement-ms"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "d"));
}

TEST_F(SondeCli, DemoRejectsUnknownProblems) {
  const CliRun r = sonde({"demo", "--problems", "slow-coffee", "--out", (dir_ / "d").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("slow-coffee"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test
