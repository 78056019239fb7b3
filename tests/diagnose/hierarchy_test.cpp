// The problem hierarchy: config parsing (errors name the key), the
// systematic search (children only under detected parents), and the
// `sonde diagnose` command end to end on a synthetic data directory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/common.hpp"
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

int count_nodes(const HierarchyNode& n) {
  int total = 1;
  for (const HierarchyNode& c : n.children) total += count_nodes(c);
  return total;
}

TEST(Hierarchy, DefaultIsTheThesisTreeAndRoundTrips) {
  const HierarchyNode root = default_hierarchy();
  EXPECT_EQ(root.id, "performance_problem");
  EXPECT_EQ(count_nodes(root), 15);  // Performance Problem + 14 below it
  const DiagnoseConfig parsed = parse_diagnose_config(default_config_json());
  EXPECT_EQ(count_nodes(parsed.root), 15);
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
  // A switch takes one of its settings only.
  for (const json& bad : {json(3), json(1.5), json(-1)}) {
    const json bad_switch = {
        {"hierarchy",
         {{"id", "performance_problem"},
          {"children", json::array({{{"id", "continuously_violated_requirements"},
                                     {"params", {{"exhaustive_split", bad}}}}})}}}};
    const std::string s = config_error(bad_switch);
    EXPECT_NE(s.find("'hierarchy.children[0].params.exhaustive_split'"), std::string::npos) << s;
    EXPECT_NE(s.find("from 0 to 2, not " + bad.dump()), std::string::npos) << s;
  }
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
  EXPECT_EQ(c.skipped, 14);
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
            15);
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
// A name as a symbolizer spells it (C++), and as an older sonde's report
// or a Kieker log named it.
void expect_standard_types_as_the_code_spells_them(const std::string& site,
                                                   const std::string& shown) {
  SCOPED_TRACE(site);
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
  EXPECT_NE(summary.find("most: lock site " + shown), std::string::npos) << summary;
  EXPECT_NE(summary.find("- lock site " + shown + ": mean"), std::string::npos) << summary;
  const std::string html = report_html(root, meta);
  EXPECT_NE(html.find("look at <code>lock site " + shown.substr(0, shown.find('&')) + "&amp;)"),
            std::string::npos);
  EXPECT_EQ(html.find("__cxx11"), std::string::npos);  // the chart's legend too
  EXPECT_EQ(report_json(root, meta)["root"]["evidence"][1]["location"], "lock site " + site);
}

TEST(DiagnoseReport, ShowsStandardTypesAsTheCodeSpellsThem) {
  expect_standard_types_as_the_code_spells_them(
      "shop::Shop::cross_bridge(std::__cxx11::basic_string<char, std::char_traits<char>, "
      "std::allocator<char> > const&)",
      "shop::Shop::cross_bridge(std::string const&)");
  expect_standard_types_as_the_code_spells_them(
      "shop.Shop.cross_bridge(std.__cxx11.basic_string<char| std.char_traits<char>| "
      "std.allocator<char> > const&)",
      "shop.Shop.cross_bridge(std.string const&)");
}

// A node that was not detected keeps the evidence it computed (here a
// query checked and found cheap): report.json has it with found false,
// the HTML shows its row marked as checked, the terminal summary leaves it
// out.
TEST(DiagnoseReport, NotDetectedNodesShowTheEvidenceTheyComputed) {
  NodeResult root;
  root.id = "performance_problem";
  root.heuristic = "performance_problem";
  root.title = "Performance Problem";
  root.status = Status::kDetected;
  root.reason = "1 service violates";
  NodeResult edc;
  edc.id = "expensive_database_call";
  edc.heuristic = "expensive_database_call";
  edc.title = "Expensive Database Call";
  edc.status = Status::kNotDetected;
  edc.reason = "no single query takes a large and growing share of a violating service";
  Evidence checked;
  checked.location = "SELECT name FROM product WHERE id = ?";
  checked.effect_size = 0.05;
  checked.detail = "In GET /search, one call of this query takes 60 ms of 1200 ms: not expensive";
  checked.values = {{"share_load", 0.05}, {"found", false}};
  edc.evidence.push_back(checked);
  root.children.push_back(edc);
  const ReportMeta meta;
  const json j = report_json(root, meta);
  const json& node = j["root"]["children"][0];
  EXPECT_EQ(node["status"], "not_detected");
  ASSERT_EQ(node["evidence"].size(), 1u);
  EXPECT_EQ(node["evidence"][0]["location"], checked.location);
  EXPECT_EQ(node["evidence"][0]["values"]["found"], false);
  EXPECT_DOUBLE_EQ(node["evidence"][0]["effect_size"].get<double>(), 0.05);
  const std::string html = report_html(root, meta);
  const size_t row = html.find("<tr class=\"fine\" title=\"checked and found within limits\">");
  ASSERT_NE(row, std::string::npos) << html;
  EXPECT_NE(html.find("one call of this query takes 60 ms of 1200 ms", row), std::string::npos);
  EXPECT_EQ(report_summary(root, meta).find("60 ms of 1200 ms"), std::string::npos);
}

// The closed-workload warning: pauses of 400 ms in a service answering in
// 8 ms, at 20% CPU, under a closed workload: the report says that pauses
// may be hidden and how to rerun with the open workload.
void pause_run(const std::string& root, double pause_ms, double busy_share, double arrival_rate) {
  nlohmann::json config = {{"max_users", 20}};
  if (arrival_rate > 0) config["arrival_rate_per_user"] = arrival_rate;
  std::filesystem::create_directories(root);
  std::ofstream(root + "/run.json") << nlohmann::json{{"config", config}, {"status", "complete"}};
  ExperimentSpec s;
  s.id = "load-u20";
  s.users = 20;
  s.requests = 400;
  s.noise_ms = 0.5;
  s.response_ms = [pause_ms](int i, const std::string&) { return i % 100 == 50 ? pause_ms : 8.0; };
  const std::string dir = write_experiment(root, s);
  json e;
  std::ifstream(dir + "/experiment.json") >> e;
  e["cpu_accounting"] = {
      {"capacity_core_s", 20}, {"busy_core_s", 20 * busy_share}, {"other_share", 0.01}};
  std::ofstream(dir + "/experiment.json") << e.dump(2);
}

TEST(DiagnoseReport, AClosedWorkloadWithALongTailRecommendsTheOpenWorkload) {
  Settings settings;
  settings.requirement = {10, 0.9};
  TempDir d;
  const std::string data_dir = d.path() + "/data";
  pause_run(data_dir, 400, 0.2, 0);
  const ExperimentData data = load_experiment_data(data_dir);
  const ReportMeta meta = report_meta(data, settings);
  ASSERT_EQ(meta.warnings.size(), 1u);
  const std::string& w = meta.warnings[0];
  EXPECT_NE(w.find("Pauses may be hidden by the closed workload"), std::string::npos) << w;
  EXPECT_NE(w.find("in load-u20 (20 users) the slowest request of GET /product took"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("at " + heuristics::fmt(20.0) + "% CPU utilization"), std::string::npos) << w;
  // The rate per user that repeats this run's request rate, and the command.
  const Experiment& e = data.experiments.at(0);
  const double rate = static_cast<double>(e.requests.size()) / e.duration_s() / e.users;
  const std::string rate_text = heuristics::fmt(rate);
  EXPECT_NE(w.find("\"arrival_rate_per_user\": " + rate_text), std::string::npos) << w;
  EXPECT_NE(w.find("`sonde diagnose --config CONFIG --out " + d.path() + "`"), std::string::npos)
      << w;
  // The demo's own options stay: the flag is added to the command that ran.
  EXPECT_NE(w.find("the same `sonde demo` command, its problems and database included, with "
                   "`--arrival-rate-per-user " +
                   rate_text + "` added"),
            std::string::npos)
      << w;
  // In both reports, as every warning.
  NodeResult root;
  root.title = "Performance Problem";
  EXPECT_EQ(report_json(root, meta)["warnings"][0], w);
  EXPECT_NE(report_html(root, meta).find("Pauses may be hidden by the closed workload"),
            std::string::npos);
  EXPECT_NE(report_summary(root, meta).find("WARNING: Pauses may be hidden"), std::string::npos);

  // No warning: an open workload, a busy CPU (queueing can make such a
  // tail), pauses shorter than the requirement, or a tail of 5x.
  TempDir open, busy, short_pause, mild;
  pause_run(open.path(), 400, 0.2, 2.0);
  pause_run(busy.path(), 400, 0.9, 0);
  pause_run(short_pause.path(), 9.5, 0.2, 0);
  pause_run(mild.path(), 40, 0.2, 0);
  for (const TempDir* t : {&open, &busy, &short_pause}) {
    const ReportMeta m = report_meta(load_experiment_data(t->path()), settings);
    EXPECT_TRUE(m.warnings.empty()) << t->path() << ": " << m.warnings.front();
  }
  // 40 ms against a P90 near 8 ms: a factor of 5, under kHiddenPauseFactor.
  ASSERT_LT(40.5 / 7.5, kHiddenPauseFactor);
  EXPECT_TRUE(report_meta(load_experiment_data(mild.path()), settings).warnings.empty());
  // Without run.json's config the workload is unknown: no warning.
  TempDir unknown;
  pause_run(unknown.path(), 400, 0.2, 0);
  std::filesystem::remove(unknown.path() + "/run.json");
  EXPECT_TRUE(report_meta(load_experiment_data(unknown.path()), settings).warnings.empty());
}

}  // namespace
}  // namespace sonde::diagnose::test
