// `sonde context` on the Kieker bookstore log and on bad input. The bookstore
// application (Kieker's example) runs Bookstore.searchBook(), which calls
// Catalog.getBook(boolean) and CRM.getOffers(), which calls
// Catalog.getBook(boolean) again: 3 operations, 4 executions per trace, and
// getBook has two callers, so 4 caller and 4 stack contexts.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

const std::string kBookstore = (kKieker / "bookstore-oer-2010" / "log").string();

TEST_F(SondeCli, ContextJsonReportsEveryLevel) {
  const CliRun r = sonde({"context", kBookstore, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["traces"]["used"], 1635);
  EXPECT_EQ(doc["executions"], 1635 * 4);
  const auto& levels = doc["levels"];
  ASSERT_EQ(levels.size(), 5u);
  const char* names[] = {"operation", "caller", "stack", "trace", "model"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(levels[i]["level"], names[i]);
    EXPECT_TRUE(levels[i].contains("sd_reduction_percent"));
    EXPECT_TRUE(levels[i].contains("contexts"));
  }
  EXPECT_EQ(levels[0]["contexts"], 3);
  EXPECT_EQ(levels[1]["contexts"], 4);
  EXPECT_EQ(levels[2]["contexts"], 4);
  EXPECT_GE(levels[3]["contexts"], 4);
  EXPECT_EQ(levels[0]["sd_reduction_percent"], 0.0);
  EXPECT_GE(levels[2]["sd_reduction_percent"].get<double>(),
            levels[1]["sd_reduction_percent"].get<double>() - 1e-9);
  EXPECT_EQ(doc["operations"].size(), 3u);
}

TEST_F(SondeCli, ContextTableDrillDownAndPictures) {
  const std::string dot = (dir_ / "cct.dot").string();
  const std::string tree = (dir_ / "cct.json").string();
  const CliRun r =
      sonde({"context", kBookstore, "--operation", "bookstoreTracing.Catalog.getBook(boolean)",
             "--dot", dot, "--tree-json", tree});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("σ reduction"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Model contexts of bookstoreTracing.Catalog.getBook(boolean)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("getBook(boolean) <- bookstoreTracing.CRM.getOffers()"), std::string::npos)
      << r.out;
  EXPECT_EQ(slurp(dot).rfind("digraph cct {", 0), 0u);
  const auto nodes = nlohmann::json::parse(slurp(tree));
  EXPECT_EQ(nodes[0]["level"], "root");
  EXPECT_EQ(nodes[0]["n"], 1635 * 4);
}

TEST_F(SondeCli, ContextErrors) {
  const std::string missing = (dir_ / "no-such-log").string();
  CliRun r = sonde({"context", missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  r = sonde({"context", kBookstore, "--min-observations", "many"});
  EXPECT_EQ(r.exit_code, 2);
  r = sonde({"context", kBookstore, "--operation", "nope()"});
  EXPECT_EQ(r.exit_code, 2);
  const std::string unwritable = (dir_ / "no-dir" / "x.dot").string();
  r = sonde({"context", kBookstore, "--dot", unwritable});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(unwritable), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test

namespace sonde::test {
namespace {

TEST_F(SondeCli, ContextAnomaliesJson) {
  const CliRun r = sonde({"context", kBookstore, "--json", "--anomalies", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& a = doc["anomalies"];
  EXPECT_EQ(a["threshold"], 3.0);
  EXPECT_LE(a["executions"].size(), 3u);
  EXPECT_LE(a["traces"].size(), 3u);
  EXPECT_LE(a["both"].get<uint64_t>(), a["context_alarms"].get<uint64_t>());
}

}  // namespace
}  // namespace sonde::test

namespace sonde::test {
namespace {

// The partial-instrumentation study on the bookstore log (3 operations):
// --study 4 gives 4 rows for each of 1, 2, 3 monitoring points, and the
// 3-point rows are the full model (4 caller and 4 stack contexts).
TEST_F(SondeCli, ContextStudyCsvSvgAndJson) {
  const std::string csv = (dir_ / "study.csv").string();
  const std::string svg = (dir_ / "study.svg").string();
  const CliRun r = sonde({"context", kBookstore, "--json", "--study", "4", "--seed", "7",
                          "--study-csv", csv, "--study-svg", svg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["study"]["instrumentations"], 12);
  EXPECT_EQ(doc["study"]["seed"], 7);
  EXPECT_EQ(doc["study"]["medians"]["monitoring_points"].size(), 3u);
  EXPECT_EQ(doc["study"]["medians"]["caller_contexts"][2], doc["levels"][1]["contexts"]);
  EXPECT_EQ(doc["study"]["medians"]["trace_contexts"][2], doc["levels"][3]["contexts"]);

  std::istringstream lines(slurp(csv));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("monitoring_points,run,executions,traces,", 0), 0u);
  std::map<int, int> per_points;
  while (std::getline(lines, line)) {
    const int points = std::stoi(line);
    ++per_points[points];
    if (points == 3) {
      EXPECT_NE(line.find(",6540,1635,3,4,4,"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(per_points, (std::map<int, int>{{1, 4}, {2, 4}, {3, 4}}));
  const std::string picture = slurp(svg);
  EXPECT_EQ(picture.rfind("<?xml", 0), 0u);
  EXPECT_NE(picture.find("</svg>"), std::string::npos);

  // Same seed, same rows.
  const std::string again = (dir_ / "again.csv").string();
  ASSERT_EQ(
      sonde({"context", kBookstore, "--study", "4", "--seed", "7", "--study-csv", again}).exit_code,
      0);
  EXPECT_EQ(slurp(again), slurp(csv));
}

TEST_F(SondeCli, ContextStudyErrors) {
  EXPECT_EQ(sonde({"context", kBookstore, "--study-csv", (dir_ / "x.csv").string()}).exit_code, 2);
  EXPECT_EQ(sonde({"context", kBookstore, "--study", "x"}).exit_code, 2);
  const CliRun r = sonde(
      {"context", kBookstore, "--study", "1", "--study-csv", (dir_ / "no/dir/x.csv").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("x.csv"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test
