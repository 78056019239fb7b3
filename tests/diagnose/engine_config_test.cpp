// The measurement-environment config: defaults, and errors that name the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnose/engine/config.hpp"
#include "diagnose/engine/engine.hpp"

namespace sonde::test {
namespace {

namespace engine = sonde::diagnose::engine;
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
  EXPECT_EQ(c.default_requirement.threshold_ms, 1000);
  EXPECT_EQ(c.default_requirement.percentile, 0.99);
  EXPECT_TRUE(c.sut.monitor);
  EXPECT_EQ(c.sut.patterns, "-*;+shop::*");
}

TEST(EngineConfig, ErrorsNameTheKey) {
  json j = minimal();
  j["sut"]["comand"] = "x";
  EXPECT_NE(error_of(j).find("config key 'sut.comand': unknown key"), std::string::npos) << error_of(j);
  j = minimal();
  j["durations"] = {{"stable_s", 0}};
  EXPECT_NE(error_of(j).find("'durations.stable_s'"), std::string::npos) << error_of(j);
  j = minimal();
  j["requirements"] = {{"services", {{"GET /a", {{"percentile", 99}}}}}};
  EXPECT_NE(error_of(j).find("'requirements.services.GET /a.percentile'"), std::string::npos) << error_of(j);
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
  j["max_users"] = "ten";
  EXPECT_NE(error_of(j).find("'max_users'"), std::string::npos) << error_of(j);
  j = minimal();
  j["arrival_rate_per_user"] = -5;
  EXPECT_NE(error_of(j).find("'arrival_rate_per_user'"), std::string::npos) << error_of(j);
  j = minimal();
  j["arrival_rate_per_user"] = 40;
  EXPECT_EQ(engine::EnvironmentConfig::parse(j).arrival_rate_per_user, 40);
}

TEST(EngineConfig, RelativePathsAreRelativeToTheConfigFile) {
  json j = minimal();
  j["profile"] = "profiles/shop.json";
  j["sut"]["command"] = {"../build/shop", "--port", "{port}"};
  const auto c = engine::EnvironmentConfig::parse(j, "/etc/sonde");
  EXPECT_EQ(c.profile, "/etc/sonde/profiles/shop.json");
  EXPECT_EQ(c.sut.command[0], "/etc/build/shop");
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

}  // namespace
}  // namespace sonde::test
