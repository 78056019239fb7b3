// The problem hierarchy: config parsing (errors name the key), the
// systematic search (children only under detected parents), and the
// `sonde diagnose` command end to end on a synthetic data directory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "diagnose/diagnosis.hpp"
#include "diagnose/report.hpp"
#include "diagnose_test_support.hpp"

namespace sonde::diagnose::test {
namespace {

using nlohmann::json;

std::string config_error(const json& config) {
  try {
    parse_diagnose_config(config);
  } catch (const DiagnoseError& e) {
    return e.what();
  }
  return "";
}

const NodeResult* find(const NodeResult& r, const std::string& id) {
  if (r.id == id) return &r;
  for (const NodeResult& c : r.children) {
    if (const NodeResult* f = find(c, id)) return f;
  }
  return nullptr;
}

int count_nodes(const HierarchyNode& n) {
  int total = 1;
  for (const HierarchyNode& c : n.children) total += count_nodes(c);
  return total;
}

TEST(Hierarchy, DefaultIsTheThesisTreeAndRoundTrips) {
  const HierarchyNode root = default_hierarchy();
  EXPECT_EQ(root.id, "performance_problem");
  EXPECT_EQ(count_nodes(root), 14);  // Performance Problem + 13 below it
  const DiagnoseConfig parsed = parse_diagnose_config(default_config_json());
  EXPECT_EQ(count_nodes(parsed.root), 14);
  EXPECT_DOUBLE_EQ(parsed.settings.alpha, 0.05);
  EXPECT_DOUBLE_EQ(parsed.settings.requirement.percentile, 0.99);
}

TEST(Hierarchy, MergedNeedsShareExperiments) {
  const std::vector<ExperimentNeed> needs = merged_needs(default_hierarchy());
  auto find_need = [&](const std::string& kind,
                       const std::string& series) -> const ExperimentNeed* {
    for (const ExperimentNeed& n : needs) {
      if (n.kind == kind && n.series == series) return &n;
    }
    return nullptr;
  };
  // One scaling series of 5 steps serves Traffic Jam, OLB, its root causes and messaging.
  const ExperimentNeed* scaling = find_need("scaling", "scaling");
  ASSERT_NE(scaling, nullptr);
  EXPECT_EQ(scaling->steps, 5);
  for (const char* probe : {"response_time", "cpu", "lock_wait", "database", "messaging"}) {
    EXPECT_NE(std::find(scaling->probes.begin(), scaling->probes.end(), probe),
              scaling->probes.end())
        << probe;
  }
  const ExperimentNeed* ramp = find_need("custom", "ramp");
  ASSERT_NE(ramp, nullptr);
  EXPECT_EQ(ramp->steps, 4);
  // Performance Problem, Hiccups, CVR and Expensive Database Call share one load test.
  int loads = 0;
  for (const ExperimentNeed& n : needs) loads += n.kind == "load";
  EXPECT_EQ(loads, 1);
}

TEST(Hierarchy, BadConfigNamesTheKey) {
  EXPECT_NE(config_error({{"alpah", 0.1}}).find("'alpah'"), std::string::npos);
  EXPECT_NE(config_error({{"alpha", 2}}).find("'alpha'"), std::string::npos);
  EXPECT_NE(config_error({{"requirement", {{"percentile", 99}}}}).find("'requirement.percentile'"),
            std::string::npos);
  const json bad_param = {
      {"hierarchy",
       {{"id", "performance_problem"},
        {"children", json::array({{{"id", "application_hiccups"}, {"params", {{"phi", 0.3}}}}})}}}};
  const std::string e = config_error(bad_param);
  EXPECT_NE(e.find("'hierarchy.children[0].params.phi'"), std::string::npos) << e;
  EXPECT_NE(e.find("max_hiccup_share"), std::string::npos) << e;  // lists the known ones
  EXPECT_NE(config_error({{"hierarchy", {{"id", "x"}, {"heuristic", "nope"}}}})
                .find("'hierarchy.heuristic'"),
            std::string::npos);
  const json dup = {{"hierarchy",
                     {{"id", "performance_problem"},
                      {"children", json::array({{{"id", "performance_problem"}}})}}}};
  EXPECT_NE(config_error(dup).find("duplicate id"), std::string::npos);
}

TEST(Search, ChildrenOfUndetectedNodesAreSkipped) {
  TempDir d;
  ExperimentSpec s;
  s.id = "load-u50";
  s.users = 50;
  write_experiment(d.path(), s);  // 100 ms everywhere: no problem
  const NodeResult root =
      run_diagnosis(load_experiment_data(d.path()), parse_diagnose_config(json::object()));
  EXPECT_EQ(root.status, Status::kNotDetected);
  const ResultCounts c = count_results(root);
  EXPECT_EQ(c.skipped, 13);
  EXPECT_EQ(c.detected + c.not_evaluated, 0);
  EXPECT_EQ(find(root, "the_stifle")->status, Status::kSkipped);
}

TEST(Search, DetectedParentsAreExaminedAndMissingDataIsNotEvaluated) {
  TempDir d;
  ExperimentSpec s;
  s.id = "load-u50";
  s.users = 50;
  s.response_ms = [](int, const std::string&) { return 2000.0; };
  write_experiment(d.path(), s);
  const NodeResult root =
      run_diagnosis(load_experiment_data(d.path()), parse_diagnose_config(json::object()));
  EXPECT_EQ(root.status, Status::kDetected);
  EXPECT_EQ(find(root, "continuously_violated_requirements")->status, Status::kDetected);
  EXPECT_EQ(find(root, "application_hiccups")->status, Status::kNotDetected);
  // No ramp series and no scaling series: not evaluated (never "not detected").
  EXPECT_EQ(find(root, "the_ramp")->status, Status::kNotEvaluated);
  EXPECT_EQ(find(root, "traffic_jam")->status, Status::kNotEvaluated);
  // A not-evaluated parent does not hide its children; they lack data too.
  EXPECT_EQ(find(root, "one_lane_bridge")->status, Status::kNotEvaluated);
}

TEST(Search, ConfiguredSubtreeAndParameters) {
  TempDir d;
  ExperimentSpec s;
  s.id = "load-u50";
  s.users = 50;
  s.response_ms = [](int, const std::string&) { return 300.0; };
  write_experiment(d.path(), s);
  // Requirement 200 ms at P90: violated; only one child configured.
  const json config = {
      {"requirement", {{"threshold_ms", 200}, {"percentile", 0.9}}},
      {"hierarchy",
       {{"id", "pp"},
        {"heuristic", "performance_problem"},
        {"children", json::array({{{"id", "cvr"},
                                   {"heuristic", "continuously_violated_requirements"},
                                   {"params", {{"min_violating_share", 0.99}}}}})}}}};
  const NodeResult root =
      run_diagnosis(load_experiment_data(d.path()), parse_diagnose_config(config));
  EXPECT_EQ(root.status, Status::kDetected);
  ASSERT_EQ(root.children.size(), 1u);
  // Every bucket violates: share 1.0 > 0.99.
  EXPECT_EQ(root.children[0].status, Status::kDetected);
}

TEST(DiagnoseCommand, WritesReportsAndEscapesNames) {
  TempDir d;
  ExperimentSpec s;
  s.id = "load-u50";
  s.users = 50;
  s.services = {"GET /<script>alert(1)</script>", "GET /fast"};
  s.response_ms = [](int, const std::string& svc) { return svc == "GET /fast" ? 50.0 : 2000.0; };
  write_experiment(d.path(), s);
  const std::string out = d.path() + "/report";
  const std::string cmd = std::string(SONDE_BINARY_DIR) + "/src/cli/sonde diagnose --data " +
                          d.path() + " --out " + out + " > " + d.path() + "/stdout.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream jf(out + "/report.json");
  const json report = json::parse(jf);
  EXPECT_EQ(report["root"]["id"], "performance_problem");
  EXPECT_EQ(report["root"]["status"], "detected");
  EXPECT_EQ(report["counts"]["detected"].get<int>() + report["counts"]["not_detected"].get<int>() +
                report["counts"]["skipped"].get<int>() +
                report["counts"]["not_evaluated"].get<int>(),
            14);
  std::stringstream html;
  html << std::ifstream(out + "/report.html").rdbuf();
  EXPECT_EQ(html.str().find("<script>"), std::string::npos);
  EXPECT_NE(html.str().find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  std::stringstream text;
  text << std::ifstream(d.path() + "/stdout.txt").rdbuf();
  EXPECT_NE(text.str().find("DETECTED Performance Problem"), std::string::npos) << text.str();
  // Bad input: a malformed requests.csv is named in the error.
  std::ofstream(d.path() + "/experiments/load-u50/requests.csv", std::ios::app) << "1,2,3\n";
  const std::string bad = std::string(SONDE_BINARY_DIR) + "/src/cli/sonde diagnose --data " +
                          d.path() + " --out " + out + " > " + d.path() + "/err.txt 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0);
  std::stringstream err;
  err << std::ifstream(d.path() + "/err.txt").rdbuf();
  EXPECT_NE(err.str().find("requests.csv"), std::string::npos) << err.str();
}

// Lock sites and operations are stored in full (report.json keeps what
// the probes recorded) and shown as the code spells them.
TEST(DiagnoseReport, ShowsStandardTypesAsTheCodeSpellsThem) {
  const std::string site =
      "shop.Shop.cross_bridge(std.__cxx11.basic_string<char| std.char_traits<char>| "
      "std.allocator<char> > const&)";
  NodeResult root;
  root.id = "dispensable_synchronization";
  root.heuristic = "dispensable_synchronization";
  root.title = "Dispensable Synchronization";
  root.status = Status::kDetected;
  root.reason = "1 lock site(s) get slower; most: lock site " + site;
  // Evidence that does not support the verdict comes first: "look at"
  // points to the first that does.
  Evidence against;
  against.location = "lock site other";
  against.values = {{"significant", false}};
  root.evidence.push_back(against);
  Evidence ev;
  ev.location = "lock site " + site;
  ev.detail = "lock site " + site + ": mean 5.78 ms -> 20.5 ms from 3 to 6 users";
  root.evidence.push_back(ev);
  root.charts["growth"] = json::array(
      {{{"key", site}, {"points", json::array({{1, 0.5, 10}, {3, 5.78, 491}})}, {"found", true}}});
  const ReportMeta meta;
  const std::string summary = report_summary(root, meta);
  EXPECT_NE(summary.find("most: lock site shop.Shop.cross_bridge(std.string const&)"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("- lock site shop.Shop.cross_bridge(std.string const&): mean"),
            std::string::npos)
      << summary;
  const std::string html = report_html(root, meta);
  EXPECT_NE(html.find("look at <code>lock site shop.Shop.cross_bridge(std.string const&amp;)"),
            std::string::npos);
  EXPECT_EQ(html.find("__cxx11"), std::string::npos);  // the chart's legend too
  EXPECT_EQ(report_json(root, meta)["root"]["evidence"][1]["location"], "lock site " + site);
}

}  // namespace
}  // namespace sonde::diagnose::test
