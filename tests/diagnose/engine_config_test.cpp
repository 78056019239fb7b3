// The measurement-environment config: defaults, and errors that name the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "diagnose/engine/config.hpp"
#include "diagnose/engine/engine.hpp"
#include "diagnose/hierarchy.hpp"

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
  EXPECT_NE(error_of(j).find("config key 'sut.comand': unknown key"), std::string::npos)
      << error_of(j);
  j = minimal();
  j["durations"] = {{"stable_s", 0}};
  EXPECT_NE(error_of(j).find("'durations.stable_s'"), std::string::npos) << error_of(j);
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
