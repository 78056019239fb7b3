// The measurement-environment config: defaults, and errors that name the key.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "diagnose/engine/config.hpp"
#include "diagnose/engine/engine.hpp"
#include "diagnose/heuristic.hpp"
#include "diagnose/hierarchy.hpp"

namespace sonde::test {
namespace {

namespace engine = sonde::diagnose::engine;
namespace fs = std::filesystem;
using nlohmann::json;

json minimal() { return {{"sut", {{"command", {"/bin/true"}}}}, {"profile", "/p.json"}}; }

std::string error_of(const json& j) {
  try {
    engine::EnvironmentConfig::parse(j);
  } catch (const engine::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(EngineConfig, DefaultsFromTheThesis) {
  const auto c = engine::EnvironmentConfig::parse(minimal());
  EXPECT_EQ(c.max_users, 10);
  EXPECT_EQ(c.arrival_rate_per_user, 0);  // closed workload
  EXPECT_EQ(c.durations.stable_s, 10);
  EXPECT_EQ(c.durations.stability_max_s, 10);  // waits for stability unless told not to
  EXPECT_EQ(c.default_requirement.threshold_ms, 1000);
  EXPECT_EQ(c.default_requirement.percentile, 0.99);
  EXPECT_TRUE(c.sut.monitor);
  EXPECT_EQ(c.sut.patterns, "-*;+shop::*");
}

TEST(EngineConfig, ErrorsNameTheKey) {
  json j = minimal();
  j["sut"]["comand"] = "x";
  EXPECT_NE(error_of(j).find("config key 'sut.comand': unknown key"), std::string::npos)
      << error_of(j);
  j = minimal();
  j["durations"] = {{"stable_s", 0}};
  EXPECT_NE(error_of(j).find("'durations.stable_s'"), std::string::npos) << error_of(j);
  j["durations"] = {{"stability_window_s", 0}};
  EXPECT_NE(error_of(j).find("'durations.stability_window_s'"), std::string::npos) << error_of(j);
  j["durations"] = {{"stability_tolerance", -0.1}};
  EXPECT_NE(error_of(j).find("'durations.stability_tolerance'"), std::string::npos) << error_of(j);
  j = minimal();
  j["requirements"] = {{"services", {{"GET /a", {{"percentile", 99}}}}}};
  EXPECT_NE(error_of(j).find("'requirements.services.GET /a.percentile'"), std::string::npos)
      << error_of(j);
  j = minimal();
  j["experiments"] = {{{"kind", "scaling"}, {"probes", {"response_time", "locks"}}}};
  EXPECT_NE(error_of(j).find("'experiments[0].probes[1]'"), std::string::npos) << error_of(j);
  j = minimal();
  j["experiments"] = {{{"kind", "custom"}}};
  EXPECT_NE(error_of(j).find("'experiments[0].phases'"), std::string::npos) << error_of(j);
  j = minimal();
  j.erase("profile");
  EXPECT_NE(error_of(j).find("'profile'"), std::string::npos) << error_of(j);
  j = minimal();
  j["sut"]["restart"] = "never";
  EXPECT_NE(error_of(j).find("'sut.restart'"), std::string::npos) << error_of(j);
  j = minimal();
  j["samplers"] = {"cpu", "gpu"};
  EXPECT_NE(error_of(j).find("'samplers[1]'"), std::string::npos) << error_of(j);
  j = minimal();
  j["sampler_period_ms"] = 5;
  EXPECT_NE(error_of(j).find("'sampler_period_ms': expected an integer >= 10"), std::string::npos)
      << error_of(j);
  j = minimal();
  j["max_users"] = "ten";
  EXPECT_NE(error_of(j).find("'max_users'"), std::string::npos) << error_of(j);
  j = minimal();
  j["arrival_rate_per_user"] = -5;
  EXPECT_NE(error_of(j).find("'arrival_rate_per_user'"), std::string::npos) << error_of(j);
  j = minimal();
  j["arrival_rate_per_user"] = 40;
  EXPECT_EQ(engine::EnvironmentConfig::parse(j).arrival_rate_per_user, 40);
}

// "database": a server the engine starts, or one it connects to; never both.
TEST(EngineConfig, DatabaseThatTheEngineStarts) {
  json j = minimal();
  j["sut"]["command"] = {"/bin/shop", "--port", "{port}", "--postgres", "{database}"};
  j["database"] = {{"kind", "postgresql"}, {"start", true}};
  const auto c = engine::EnvironmentConfig::parse(j);
  EXPECT_EQ(c.database.kind, "postgresql");
  EXPECT_TRUE(c.database.start);
  EXPECT_EQ(c.database.conninfo, "");  // set by the engine once its server runs
  EXPECT_TRUE(c.database.cpus.empty());
  EXPECT_TRUE(c.database.sample);
  EXPECT_EQ(c.database.sample_interval_ms, 250);
  EXPECT_EQ(c.sut.command[4], "{database}");  // replaced when the SUT starts
}

TEST(EngineConfig, DatabaseGivenByConninfo) {
  json j = minimal();
  j["database"] = {{"kind", "postgresql"},
                   {"conninfo", "host=db.example port=5432 user=shop"},
                   {"sample", false},
                   {"sample_interval_ms", 1000}};
  const auto c = engine::EnvironmentConfig::parse(j);
  EXPECT_FALSE(c.database.start);
  EXPECT_EQ(c.database.conninfo, "host=db.example port=5432 user=shop");
  EXPECT_FALSE(c.database.sample);
  EXPECT_EQ(c.database.sample_interval_ms, 1000);
  // Without the key there is no database.
  EXPECT_EQ(engine::EnvironmentConfig::parse(minimal()).database.kind, "");
}

TEST(EngineConfig, DatabaseErrorsNameTheKey) {
  json j = minimal();
  j["database"] = {{"kind", "postgresql"}, {"start", true}, {"conninfo", "host=127.0.0.1"}};
  EXPECT_NE(error_of(j).find("config key 'database.conninfo': not with \"start\": true"),
            std::string::npos)
      << error_of(j);
  j["database"] = {{"kind", "postgresql"}};
  EXPECT_NE(error_of(j).find("config key 'database.conninfo': required unless \"start\": true"),
            std::string::npos)
      << error_of(j);
  j["database"] = {{"kind", "postgresql"}, {"start", false}};
  EXPECT_NE(error_of(j).find("'database.conninfo'"), std::string::npos) << error_of(j);
  j["database"] = {{"kind", "mysql"}, {"start", true}};
  EXPECT_NE(error_of(j).find("config key 'database.kind': invalid value 'mysql'"),
            std::string::npos)
      << error_of(j);
  j["database"] = {{"start", true}};
  EXPECT_NE(error_of(j).find("config key 'database.kind': required"), std::string::npos)
      << error_of(j);
  j["database"] = {{"kind", "postgresql"}, {"start", true}, {"port", 5432}};
  EXPECT_NE(error_of(j).find("config key 'database.port': unknown key"), std::string::npos)
      << error_of(j);
  j["database"] = {{"kind", "postgresql"}, {"start", "yes"}};
  EXPECT_NE(error_of(j).find("'database.start'"), std::string::npos) << error_of(j);
  j["database"] = "postgresql";
  EXPECT_NE(error_of(j).find("config key 'database': expected an object"), std::string::npos)
      << error_of(j);
  // The CPU list is checked before "start" is: CPU 0 is the one every machine has.
  j["database"] = {{"kind", "postgresql"}, {"conninfo", "host=db.example"}, {"cpus", "0"}};
  EXPECT_NE(error_of(j).find("config key 'database.cpus': only with \"start\": true"),
            std::string::npos)
      << error_of(j);
}

TEST(EngineConfig, DatabaseSampleIntervalIsChecked) {
  json j = minimal();
  j["database"] = {{"kind", "postgresql"}, {"start", true}, {"sample_interval_ms", 5}};
  EXPECT_NE(error_of(j).find("config key 'database.sample_interval_ms': expected an integer >= 10"),
            std::string::npos)
      << error_of(j);
  j["database"]["sample_interval_ms"] = 2000000;  // above the integers' limit, 1000000
  EXPECT_NE(error_of(j).find("'database.sample_interval_ms'"), std::string::npos) << error_of(j);
  j["database"]["sample_interval_ms"] = 0.5;
  EXPECT_NE(error_of(j).find("'database.sample_interval_ms'"), std::string::npos) << error_of(j);
  j["database"]["sample_interval_ms"] = 10;
  EXPECT_EQ(engine::EnvironmentConfig::parse(j).database.sample_interval_ms, 10);
}

TEST(EngineConfig, DatabasePlaceholderNeedsADatabase) {
  json j = minimal();
  j["sut"]["command"] = {"/bin/shop", "--port", "{port}", "--postgres={database}"};
  EXPECT_NE(error_of(j).find("config key 'sut.command[3]': uses {database}, but no \"database\""),
            std::string::npos)
      << error_of(j);
}

// "broker": a Redis the engine starts, or one it connects to; never both.
TEST(EngineConfig, BrokerThatTheEngineStartsOrIsGiven) {
  json j = minimal();
  j["sut"]["command"] = {"/bin/shop", "--port", "{port}", "--redis", "{broker}"};
  j["broker"] = {{"kind", "redis"}, {"start", true}};
  engine::EnvironmentConfig c = engine::EnvironmentConfig::parse(j);
  EXPECT_EQ(c.broker.kind, "redis");
  EXPECT_TRUE(c.broker.start);
  EXPECT_EQ(c.broker.address, "");  // set by the engine once its server runs
  EXPECT_TRUE(c.broker.sample);
  EXPECT_EQ(c.broker.sample_interval_ms, 250);
  EXPECT_EQ(c.broker.queues, "*");
  EXPECT_EQ(c.sut.command[4], "{broker}");  // replaced when the SUT starts
  j["broker"] = {{"kind", "redis"},
                 {"address", "mq.example:6380"},
                 {"queues", "shop:queue:*"},
                 {"sample", false}};
  c = engine::EnvironmentConfig::parse(j);
  EXPECT_FALSE(c.broker.start);
  EXPECT_EQ(c.broker.address, "mq.example:6380");
  EXPECT_EQ(c.broker.queues, "shop:queue:*");
  EXPECT_FALSE(c.broker.sample);
  EXPECT_EQ(engine::EnvironmentConfig::parse(minimal()).broker.kind, "");
}

TEST(EngineConfig, BrokerErrorsNameTheKey) {
  json j = minimal();
  j["broker"] = {{"kind", "redis"}, {"start", true}, {"address", "127.0.0.1:6379"}};
  EXPECT_NE(error_of(j).find("config key 'broker.address': not with \"start\": true"),
            std::string::npos)
      << error_of(j);
  j["broker"] = {{"kind", "redis"}};
  EXPECT_NE(error_of(j).find("config key 'broker.address': required unless \"start\": true"),
            std::string::npos)
      << error_of(j);
  j["broker"] = {{"kind", "redis"}, {"address", "127.0.0.1:99999"}};
  EXPECT_NE(error_of(j).find("config key 'broker.address': '127.0.0.1:99999' has no valid port"),
            std::string::npos)
      << error_of(j);
  j["broker"] = {{"kind", "redis"}, {"address", ":6379"}};
  EXPECT_NE(error_of(j).find("config key 'broker.address': ':6379' has no host"), std::string::npos)
      << error_of(j);
  j["broker"] = {{"kind", "activemq"}, {"start", true}};
  EXPECT_NE(error_of(j).find("config key 'broker.kind': invalid value 'activemq'"),
            std::string::npos)
      << error_of(j);
  j["broker"] = {{"start", true}};
  EXPECT_NE(error_of(j).find("config key 'broker.kind': required"), std::string::npos)
      << error_of(j);
  j["broker"] = {{"kind", "redis"}, {"start", true}, {"queues", ""}};
  EXPECT_NE(error_of(j).find("config key 'broker.queues': must not be empty"), std::string::npos)
      << error_of(j);
  j["broker"] = {{"kind", "redis"}, {"start", true}, {"sample_interval_ms", 1}};
  EXPECT_NE(error_of(j).find("'broker.sample_interval_ms'"), std::string::npos) << error_of(j);
  j["broker"] = {{"kind", "redis"}, {"address", "mq.example:6379"}, {"cpus", "0"}};
  EXPECT_NE(error_of(j).find("config key 'broker.cpus': only with \"start\": true"),
            std::string::npos)
      << error_of(j);
  j["broker"] = "redis";
  EXPECT_NE(error_of(j).find("config key 'broker': expected an object"), std::string::npos)
      << error_of(j);
  j = minimal();
  j["sut"]["command"] = {"/bin/shop", "--redis", "{broker}"};
  EXPECT_NE(error_of(j).find("config key 'sut.command[2]': uses {broker}, but no \"broker\""),
            std::string::npos)
      << error_of(j);
}

// CPU lists as Linux writes them; every CPU must be one this process may use.
TEST(EngineConfig, CpuListsAreParsedAndChecked) {
  json j = minimal();
  j["sut"]["cpus"] = "0";
  EXPECT_EQ(engine::EnvironmentConfig::parse(j).sut.cpus, (std::vector<int>{0}));
  j["sut"]["cpus"] = "0,0-0";  // duplicates collapse
  EXPECT_EQ(engine::EnvironmentConfig::parse(j).sut.cpus, (std::vector<int>{0}));
  j["database"] = {{"kind", "postgresql"}, {"start", true}, {"cpus", "0"}};
  EXPECT_EQ(engine::EnvironmentConfig::parse(j).database.cpus, (std::vector<int>{0}));

  j = minimal();
  for (const char* bad : {"0-", "a", "1,,2", "0,", "-1", "0 - 1", "12345"}) {
    SCOPED_TRACE(bad);
    j["sut"]["cpus"] = bad;
    EXPECT_NE(error_of(j).find("config key 'sut.cpus': "), std::string::npos) << error_of(j);
  }
  j["sut"]["cpus"] = "3-1";
  EXPECT_NE(error_of(j).find("config key 'sut.cpus': '3-1' is a descending range"),
            std::string::npos)
      << error_of(j);
  j["sut"]["cpus"] = 0;  // a string, not a number or an array
  EXPECT_NE(error_of(j).find("config key 'sut.cpus': expected a string"), std::string::npos)
      << error_of(j);
  j["sut"]["cpus"] = "4095";  // beyond any cpu_set_t
  EXPECT_NE(error_of(j).find("config key 'sut.cpus': CPU 4095 is out of range"), std::string::npos)
      << error_of(j);

  j = minimal();
  j["database"] = {{"kind", "postgresql"}, {"start", true}, {"cpus", "0-x"}};
  EXPECT_NE(error_of(j).find("config key 'database.cpus': '0-x' is not a CPU list"),
            std::string::npos)
      << error_of(j);
}

TEST(EngineConfig, CpusThisMachineDoesNotHaveAreErrors) {
  cpu_set_t usable;
  CPU_ZERO(&usable);
  ASSERT_EQ(::sched_getaffinity(0, sizeof usable, &usable), 0);
  int missing = -1;
  for (int c = 0; c < CPU_SETSIZE && missing < 0; ++c)
    if (!CPU_ISSET(c, &usable)) missing = c;
  if (missing < 0) GTEST_SKIP() << "this process may use every CPU a cpu_set_t can name";
  const std::string cpu = std::to_string(missing);
  json j = minimal();
  j["sut"]["cpus"] = "0," + cpu;
  EXPECT_NE(error_of(j).find("config key 'sut.cpus': CPU " + cpu + " is not available here"),
            std::string::npos)
      << error_of(j);
  j = minimal();
  j["database"] = {{"kind", "postgresql"}, {"start", true}, {"cpus", cpu}};
  EXPECT_NE(error_of(j).find("config key 'database.cpus': CPU " + cpu + " is not available here"),
            std::string::npos)
      << error_of(j);
}

TEST(EngineConfig, RelativePathsAreRelativeToTheConfigFile) {
  json j = minimal();
  j["profile"] = "profiles/shop.json";
  j["sut"]["command"] = {"../build/shop", "--port", "{port}"};
  const auto c = engine::EnvironmentConfig::parse(j, "/etc/sonde");
  EXPECT_EQ(c.profile, "/etc/sonde/profiles/shop.json");
  EXPECT_EQ(c.sut.command[0], "/etc/build/shop");
}

// `sonde diagnose --config some/dir/env.json` from anywhere: "./prog"
// (and a relative sut.sonde) is the config folder's, made absolute, so
// execvp does not look for "prog" on PATH.
TEST(EngineConfig, ARelativeConfigPathKeepsItsFolderAsTheBase) {
  const fs::path cwd = fs::current_path();
  std::string tmpl = (cwd / "sonde-config-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const fs::path relative = fs::relative(dir / "env.json", cwd);
  ASSERT_TRUE(relative.is_relative());
  json j = minimal();
  j["sut"]["command"] = {"./prog", "--port", "{port}", "data/shop.db"};
  j["sut"]["sonde"] = "bin/sonde";
  j["profile"] = "profile.json";
  std::ofstream(dir / "env.json") << j.dump();
  const auto c = engine::EnvironmentConfig::load(relative.string());
  fs::remove_all(dir);
  EXPECT_EQ(c.sut.command[0], (dir / "prog").string());
  EXPECT_EQ(c.sut.sonde, (dir / "bin/sonde").string());
  EXPECT_EQ(c.profile, (dir / "profile.json").string());
  // Other arguments are the program's own: passed unchanged.
  EXPECT_EQ(c.sut.command[3], "data/shop.db");
  // A bare name is looked up on PATH, as execvp does.
  j["sut"]["command"] = {"shop"};
  j["sut"]["sonde"] = "sonde";
  const auto bare = engine::EnvironmentConfig::parse(j, "/etc/sonde");
  EXPECT_EQ(bare.sut.command[0], "shop");
  EXPECT_EQ(bare.sut.sonde, "sonde");
}

// A plan that needs the cpu probe (One Lane Bridge's, Database
// Congestion's scaling series) starts the SUT with the CPU sampler, even
// when the config lists no samplers; otherwise its experiments would say
// "cpu" and have no CPU records.
TEST(EnginePlan, ThePlannedCpuProbeSwitchesTheCpuSamplerOn) {
  json j = minimal();
  j["max_users"] = 4;
  const auto config = engine::EnvironmentConfig::parse(j);
  ASSERT_TRUE(config.samplers.empty());
  const auto& olb = *diagnose::heuristic_registry().at("one_lane_bridge");
  const auto plans = engine::plan_from_needs(config, olb.needs());
  ASSERT_EQ(plans.size(), 1u);
  std::vector<const engine::ExperimentSpec*> scaling;
  for (const auto& phase : plans[0].phases)
    if (const auto* e = std::get_if<engine::ExperimentSpec>(&phase)) scaling.push_back(e);
  ASSERT_FALSE(scaling.empty());
  EXPECT_EQ(engine::sut_samplers(config.samplers, scaling), (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(engine::sut_samplers({"memory"}, scaling), (std::vector<std::string>{"memory", "cpu"}));
  EXPECT_EQ(engine::sut_samplers({"all"}, scaling), (std::vector<std::string>{"all"}));
  EXPECT_EQ(engine::sut_samplers({"cpu"}, scaling), (std::vector<std::string>{"cpu"}));
  // At 250 ms, not libsonde's 1 s: a step's utilization bound wants 20
  // instants or more (One Lane Bridge); the config may set another period.
  EXPECT_EQ(engine::sampler_settings(config, scaling),
            (std::vector<std::string>{"samplers=cpu", "sampler_period_ms=250"}));
  j["sampler_period_ms"] = 100;
  EXPECT_EQ(engine::sampler_settings(engine::EnvironmentConfig::parse(j), scaling),
            (std::vector<std::string>{"samplers=cpu", "sampler_period_ms=100"}));
  // The Stifle's single-user test needs no CPU records: none added.
  const auto& stifle = *diagnose::heuristic_registry().at("the_stifle");
  const auto single = engine::plan_from_needs(config, stifle.needs());
  ASSERT_EQ(single.size(), 1u);
  std::vector<const engine::ExperimentSpec*> measured;
  for (const auto& phase : single[0].phases)
    if (const auto* e = std::get_if<engine::ExperimentSpec>(&phase)) measured.push_back(e);
  ASSERT_FALSE(measured.empty());
  EXPECT_TRUE(engine::sut_samplers(config.samplers, measured).empty());
  EXPECT_TRUE(engine::sampler_settings(config, measured).empty());
}

TEST(EnginePlan, ScalingUsersFollowDynamicSpotter) {
  // step = (max - 1) / (n - 1), truncated; the last step is max.
  EXPECT_EQ(engine::scaling_users(10, 4), (std::vector<int>{1, 4, 7, 10}));
  EXPECT_EQ(engine::scaling_users(40, 5), (std::vector<int>{1, 10, 20, 30, 40}));
  EXPECT_EQ(engine::scaling_users(3, 5), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(engine::scaling_users(8, 1), (std::vector<int>{8}));
}

TEST(EnginePlan, CustomSeriesNumbersMeasuredWindows) {
  json j = minimal();
  j["experiments"] = {{{"kind", "custom"},
                       {"series", "ramp"},
                       {"phases",
                        {{{"users", 1}},
                         {{"users", 5}, {"stable_s", 3}, {"measure", false}},
                         {{"users", 1}},
                         {{"users", 5}, {"stable_s", 3}, {"measure", false}},
                         {{"users", 1}}}}}};
  const auto plans = engine::plan_from_config(engine::EnvironmentConfig::parse(j));
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(plans[0].phases.size(), 5u);
  std::vector<std::string> ids;
  for (const auto& p : plans[0].phases)
    if (const auto* e = std::get_if<engine::ExperimentSpec>(&p)) ids.push_back(e->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"ramp-w1", "ramp-w2", "ramp-w3"}));
  EXPECT_EQ(std::get<engine::LoadPhase>(plans[0].phases[1]).users, 5);
  EXPECT_EQ(std::get<engine::LoadPhase>(plans[0].phases[1]).duration_s, 3);
}

// Without "experiments" the heuristics of the hierarchy decide what runs:
// every need gets its experiments, the single-user test first, the Ramp's
// windows between load phases at max_users.
TEST(EnginePlan, WithoutExperimentsTheHierarchysNeedsArePlanned) {
  json j = minimal();
  j["max_users"] = 8;
  j["durations"] = {{"stable_s", 4}};
  const auto config = engine::EnvironmentConfig::parse(j);
  const auto needs = diagnose::merged_needs(diagnose::default_hierarchy());
  const auto plans = engine::plan_from_needs(config, needs);
  ASSERT_EQ(plans.size(), needs.size());
  EXPECT_EQ(plans.front().series, "single_user");
  for (const diagnose::ExperimentNeed& need : needs) {
    SCOPED_TRACE(need.kind + " " + need.series);
    const std::string series = need.series.empty() ? need.kind : need.series;
    const auto plan = std::find_if(plans.begin(), plans.end(),
                                   [&](const engine::SeriesPlan& p) { return p.series == series; });
    ASSERT_NE(plan, plans.end());
    std::vector<const engine::ExperimentSpec*> measured;
    std::vector<const engine::LoadPhase*> load;
    for (const auto& phase : plan->phases) {
      if (const auto* e = std::get_if<engine::ExperimentSpec>(&phase)) measured.push_back(e);
      if (const auto* l = std::get_if<engine::LoadPhase>(&phase)) load.push_back(l);
    }
    for (const auto* e : measured) EXPECT_EQ(e->probes, need.probes);
    if (need.kind == "scaling") {
      EXPECT_EQ(measured.size(), engine::scaling_users(8, need.steps).size());
      EXPECT_EQ(measured.back()->users, 8);
    } else if (need.kind == "custom") {
      ASSERT_EQ(measured.size(), static_cast<size_t>(need.steps));
      ASSERT_EQ(load.size(), measured.size() - 1);
      for (const auto* e : measured) EXPECT_EQ(e->users, 1);
      for (const auto* l : load) {
        EXPECT_EQ(l->users, 8);
        EXPECT_EQ(l->duration_s, 4);
      }
      EXPECT_EQ(measured.back()->id, series + "-w" + std::to_string(need.steps));
    } else {
      EXPECT_EQ(measured.size(), 1u);
    }
  }
}

}  // namespace
}  // namespace sonde::test
