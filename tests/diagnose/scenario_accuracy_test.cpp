// The scenario suite's scoring: cases file parsing (errors name file and
// line) and the thesis' accuracy figures from labelled report.json files.
#include "diagnose/scenario_accuracy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "diagnose_test_support.hpp"

namespace sonde::diagnose::test {
namespace {

void sa_write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// A report.json with the given node statuses (flat under the root).
void sa_report(const std::string& dir, const std::map<std::string, std::string>& statuses,
               bool complete = true) {
  nlohmann::json children = nlohmann::json::array();
  for (const auto& [id, status] : statuses)
    children.push_back({{"id", id}, {"status", status}, {"children", nlohmann::json::array()}});
  const nlohmann::json j = {
      {"complete", complete},
      {"root", {{"id", "performance_problem"}, {"status", "detected"}, {"children", children}}}};
  sa_write(dir + "/report.json", j.dump());
}

TEST(ScenarioAccuracy, ThesisRatesFromLabelledReports) {
  TempDir d;
  const std::string cases = d.path() + "/cases.txt";
  sa_write(cases,
           "# id | title | flags | must | must not\n"
           "tc17 | Clear Blob | blob | the_blob | empty_semi_trucks\n"
           "tc19 | Direct loop | empty-semi-trucks | empty_semi_trucks | the_blob\n"
           "tc16 | File transfer | excessive-messaging | - | the_blob empty_semi_trucks\n"
           "tc99 | Not run | - | the_blob | - | --arrival-rate-per-user 50\n");
  const auto parsed = load_scenario_cases(cases);
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed[0].shop_flags, std::vector<std::string>{"blob"});
  EXPECT_TRUE(parsed[0].demo_options.empty());
  EXPECT_EQ(parsed[3].demo_options, (std::vector<std::string>{"--arrival-rate-per-user", "50"}));
  EXPECT_TRUE(parsed[2].must.empty());
  EXPECT_TRUE(parsed[3].shop_flags.empty());
  const std::string results = d.path() + "/results";
  sa_report(results + "/tc17", {{"the_blob", "detected"}, {"empty_semi_trucks", "not_detected"}});
  // EST correct, Blob a false alarm.
  sa_report(results + "/tc19", {{"the_blob", "detected"}, {"empty_semi_trucks", "detected"}});
  // Both correctly negative; skipped counts as not detected.
  sa_report(results + "/tc16", {{"the_blob", "skipped"}, {"empty_semi_trucks", "not_detected"}},
            false);
  const AccuracyTable t = score_scenarios(parsed, results);
  ASSERT_EQ(t.rows.size(), 2u);
  const AccuracyRow& blob = t.rows[0];
  EXPECT_EQ(blob.node, "the_blob");
  EXPECT_EQ(blob.positives, 1);  // tc99 has no report: not scored
  EXPECT_EQ(blob.negatives, 2);
  EXPECT_EQ(blob.tp, 1);
  EXPECT_EQ(blob.fp, 1);
  EXPECT_DOUBLE_EQ(blob.accuracy, (1 + 1.0 - 0.5) / 2);
  ASSERT_EQ(blob.wrong.size(), 1u);
  EXPECT_EQ(blob.wrong[0], "tc19 (false alarm)");
  const AccuracyRow& est = t.rows[1];
  EXPECT_EQ(est.tp, 1);
  EXPECT_EQ(est.fp, 0);
  EXPECT_DOUBLE_EQ(est.accuracy, 1.0);
  ASSERT_EQ(t.missing.size(), 1u);
  EXPECT_EQ(t.missing[0].rfind("tc99", 0), 0u);
  EXPECT_EQ(t.incomplete, std::vector<std::string>{"tc16"});
  const std::string text = format_accuracy(t);
  EXPECT_NE(text.find("the_blob"), std::string::npos) << text;
  EXPECT_NE(text.find("0.750"), std::string::npos) << text;
}

// Two fresh runs of one suite: the Blob right in both, Empty Semi Trucks
// missed in the second; per node the mean and the worst balanced accuracy.
TEST(ScenarioAccuracy, RepeatedRunsGiveTheMeanAndTheWorstPerNode) {
  TempDir d;
  const std::string cases = d.path() + "/cases.txt";
  sa_write(cases,
           "tc17 | Clear Blob | blob | the_blob | empty_semi_trucks\n"
           "tc19 | Direct loop | empty-semi-trucks | empty_semi_trucks | the_blob\n");
  const auto parsed = load_scenario_cases(cases);
  sa_report(d.path() + "/rep1/tc17",
            {{"the_blob", "detected"}, {"empty_semi_trucks", "not_detected"}});
  sa_report(d.path() + "/rep1/tc19",
            {{"the_blob", "not_detected"}, {"empty_semi_trucks", "detected"}});
  sa_report(d.path() + "/rep2/tc17",
            {{"the_blob", "detected"}, {"empty_semi_trucks", "not_detected"}});
  sa_report(d.path() + "/rep2/tc19",
            {{"the_blob", "not_detected"}, {"empty_semi_trucks", "not_detected"}});
  const std::vector<AccuracyTable> tables = {score_scenarios(parsed, d.path() + "/rep1"),
                                             score_scenarios(parsed, d.path() + "/rep2")};
  EXPECT_EQ(wrong_labels(tables[0]), 0);
  EXPECT_EQ(wrong_labels(tables[1]), 1);
  const std::string text = format_repeated_accuracy({"rep1", "rep2"}, tables);
  std::istringstream lines(text);
  std::map<std::string, std::string> row;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string node;
    words >> node;
    row[node] = line;
  }
  // The Blob: 1.0 both times. EST: 1.0, then (1 + 0 - 0) / 2 = 0.5.
  EXPECT_NE(row["the_blob"].find("1.000    1.000"), std::string::npos) << text;
  EXPECT_NE(row["empty_semi_trucks"].find("0.750    0.500"), std::string::npos) << text;
  EXPECT_NE(row["empty_semi_trucks"].find("rep2: tc19 (missed: not_detected)"), std::string::npos)
      << text;
}

TEST(ScenarioAccuracy, BadCasesFileNamesTheLine) {
  TempDir d;
  const std::string cases = d.path() + "/cases.txt";
  sa_write(cases, "tc01 | ok | - | - | performance_problem\ntc02 | too few | -\n");
  try {
    load_scenario_cases(cases);
    FAIL() << "accepted a line with 3 fields";
  } catch (const DiagnoseError& e) {
    EXPECT_NE(std::string(e.what()).find("cases.txt:2"), std::string::npos) << e.what();
  }
  sa_write(cases, "tc01 | a | - | the_blob | the_blob\n");
  EXPECT_THROW(load_scenario_cases(cases), DiagnoseError);
}

}  // namespace
}  // namespace sonde::diagnose::test
