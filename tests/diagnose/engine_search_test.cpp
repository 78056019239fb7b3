// The systematic search's experiments on demand: which experiments the
// next level needs, given the diagnosis so far and what already ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "diagnose/diagnosis.hpp"
#include "diagnose/engine/search.hpp"

namespace sonde::diagnose::engine {
namespace {

// A result tree shaped like `node`; statuses by node id, the rest
// not evaluated (as if their data were missing).
NodeResult result_of(const HierarchyNode& node, const std::map<std::string, Status>& statuses) {
  NodeResult r;
  r.id = node.id;
  r.heuristic = node.heuristic;
  const auto s = statuses.find(node.id);
  r.status = s != statuses.end() ? s->second : Status::kNotEvaluated;
  for (const HierarchyNode& c : node.children) r.children.push_back(result_of(c, statuses));
  return r;
}

std::vector<std::string> series_of(const std::vector<ExperimentNeed>& needs) {
  std::vector<std::string> out;
  for (const ExperimentNeed& n : needs) out.push_back(n.kind + ":" + n.series);
  std::sort(out.begin(), out.end());
  return out;
}

ExperimentNeed ran(const std::string& kind, const std::string& series = "") {
  return {kind, series, 1, {}};
}

class SearchNeeds : public ::testing::Test {
 protected:
  HierarchyNode root_ = default_hierarchy();
  std::vector<ExperimentNeed> merged_ = merged_needs(root_);
};

TEST_F(SearchNeeds, AtFirstOnlyTheRootsLoadTest) {
  const auto next = needs_to_run(root_, result_of(root_, {}), merged_, {});
  EXPECT_EQ(series_of(next), (std::vector<std::string>{"load:"}));
}

TEST_F(SearchNeeds, NoProblemNoFurtherExperiments) {
  const auto next =
      needs_to_run(root_, result_of(root_, {{"performance_problem", Status::kNotDetected}}),
                   merged_, {ran("load")});
  EXPECT_TRUE(next.empty()) << series_of(next).size();
}

TEST_F(SearchNeeds, ADetectedProblemReachesTheNextLevelOnly) {
  // Performance problem detected; its children that the load test serves
  // are decided, the Ramp waits for its windows and Time Outside the
  // Application for its single-user test. Traffic Jam sits below
  // Continuously Violated Requirements, which was not detected.
  const auto next =
      needs_to_run(root_,
                   result_of(root_, {{"performance_problem", Status::kDetected},
                                     {"application_hiccups", Status::kNotDetected},
                                     {"continuously_violated_requirements", Status::kNotDetected}}),
                   merged_, {ran("load")});
  EXPECT_EQ(series_of(next), (std::vector<std::string>{"custom:ramp", "single_user:"}));
}

TEST_F(SearchNeeds, OneRunOfASeriesCarriesEveryProbeBelowIt) {
  const auto next =
      needs_to_run(root_,
                   result_of(root_, {{"performance_problem", Status::kDetected},
                                     {"continuously_violated_requirements", Status::kDetected}}),
                   merged_, {ran("load"), ran("custom", "ramp"), ran("single_user")});
  ASSERT_EQ(series_of(next), (std::vector<std::string>{"scaling:scaling"}));
  // Traffic Jam asks for response times only; the series also serves One
  // Lane Bridge, Dispensable Synchronization, Excessive Messaging, ...
  for (const char* probe : {"response_time", "lock_wait", "database", "messaging", "cpu"})
    EXPECT_NE(std::find(next[0].probes.begin(), next[0].probes.end(), probe), next[0].probes.end())
        << probe;
}

TEST_F(SearchNeeds, ANodeNotEvaluatedFromItsDataDoesNotHideItsChildren) {
  // Database Congestion ran (scaling) but could not be evaluated, e.g. its
  // sampler failed: the Stifle and Expensive Database Call still get their
  // single-user test. Before the scaling series ran, they would not.
  // (Without Time Outside the Application, whose single-user test runs at
  // the level below Performance Problem anyway.)
  std::erase_if(root_.children,
                [](const HierarchyNode& c) { return c.id == "time_outside_application"; });
  const std::map<std::string, Status> statuses = {
      {"performance_problem", Status::kDetected},
      {"continuously_violated_requirements", Status::kDetected},
      {"traffic_jam", Status::kDetected},
      {"one_lane_bridge", Status::kNotDetected},
      {"excessive_messaging", Status::kNotDetected},
      {"application_hiccups", Status::kNotDetected},
      {"the_ramp", Status::kNotDetected}};
  const auto after = needs_to_run(root_, result_of(root_, statuses), merged_,
                                  {ran("load"), ran("custom", "ramp"), ran("scaling", "scaling")});
  EXPECT_EQ(series_of(after), (std::vector<std::string>{"single_user:"}));
  const auto before = needs_to_run(root_, result_of(root_, statuses), merged_,
                                   {ran("load"), ran("custom", "ramp")});
  EXPECT_EQ(series_of(before), (std::vector<std::string>{"scaling:scaling"}));
}

}  // namespace
}  // namespace sonde::diagnose::engine
