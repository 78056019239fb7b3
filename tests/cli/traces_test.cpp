// `sonde traces`: --summary counts against an independent count of the
// Kieker test logs (their .dat lines by type id through kieker.map), the
// trace list with filters and ranking, --show, and bad input.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

using nlohmann::json;

struct KiekerCounts {
  std::map<std::string, uint64_t> by_class;
  std::set<std::string> trace_ids;  // OperationExecutionRecord traceIds, TraceMetadata traceIds
};

// Reads a Kieker .dat directory the simplest possible way: split lines on ';'.
KiekerCounts count_kieker_dir(const fs::path& dir) {
  std::map<std::string, std::string> classes;
  std::istringstream map_text(slurp(dir / "kieker.map"));
  for (std::string line; std::getline(map_text, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) classes[line.substr(0, eq)] = line.substr(eq + 1);
  }
  KiekerCounts c;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".dat") continue;
    std::istringstream lines(slurp(entry.path()));
    for (std::string line; std::getline(lines, line);) {
      std::vector<std::string> fields;
      std::stringstream parts(line);
      for (std::string f; std::getline(parts, f, ';');) fields.push_back(f);
      const std::string& cls = classes.at(fields.at(0));
      ++c.by_class[cls];
      if (cls.ends_with("OperationExecutionRecord")) c.trace_ids.insert(fields.at(4));
      if (cls.ends_with("TraceMetadata")) c.trace_ids.insert(fields.at(2));
    }
  }
  return c;
}

TEST_F(SondeCli, TracesSummaryJsonCountsEveryRecordAndTrace) {
  for (const char* name : {"bookstore-oer-2010", "events-2014", "events-2017-singleton"}) {
    const fs::path log = kKieker / name / "log";
    const KiekerCounts want = count_kieker_dir(log);
    const CliRun r = sonde({"traces", log.string(), "--summary", "--json"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const json got = json::parse(r.out);
    uint64_t records = 0;
    for (const auto& [cls, n] : want.by_class) {
      records += n;
      EXPECT_EQ(got["record_types"].value(cls, uint64_t{0}), n) << name << " " << cls;
    }
    EXPECT_EQ(got["record_types"].size(), want.by_class.size()) << name;
    EXPECT_EQ(got["records"].get<uint64_t>(), records) << name;
    EXPECT_EQ(got["traces"].get<uint64_t>(), want.trace_ids.size()) << name;
    EXPECT_EQ(got["invalid_traces"].get<uint64_t>(), 0u) << name;
  }
}

TEST_F(SondeCli, TracesListRanksFiltersAndLimits) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  CliRun r = sonde({"traces", log, "--json", "--sort", "duration", "--limit", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json got = json::parse(r.out);
  EXPECT_EQ(got["matched"].get<uint64_t>(), count_kieker_dir(log).trace_ids.size());
  ASSERT_EQ(got["traces"].size(), 7u);
  for (size_t i = 1; i < 7; ++i) {
    EXPECT_GE(got["traces"][i - 1]["duration_ns"].get<int64_t>(),
              got["traces"][i]["duration_ns"].get<int64_t>());
  }
  const int64_t longest = got["traces"][0]["duration_ns"].get<int64_t>();

  // Everything at least as long as the 7th longest: at least 7 traces, and
  // --max-duration below the longest drops the longest one.
  const std::string seventh = std::to_string(got["traces"][6]["duration_ns"].get<int64_t>());
  r = sonde({"traces", log, "--json", "--min-duration", seventh, "--limit", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(json::parse(r.out)["matched"].get<uint64_t>(), 7u);
  r = sonde({"traces", log, "--json", "--sort", "duration", "--max-duration",
             std::to_string(longest - 1), "--limit", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(json::parse(r.out)["traces"][0]["duration_ns"].get<int64_t>(), longest);

  // The same list as CSV: a header and one line per trace, longest first.
  r = sonde({"traces", log, "--csv", "--sort", "duration", "--limit", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream csv(r.out);
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header.rfind("trace_id,start_ns,duration_ns,", 0), 0u) << header;
  EXPECT_EQ(std::stoll(first.substr(first.find(',', first.find(',') + 1) + 1)), longest) << first;
  size_t rows = 1;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 7u);

  // Root-operation and host filters.
  r = sonde({"traces", log, "--json", "--operation", "no-such-operation"});
  EXPECT_EQ(json::parse(r.out)["matched"].get<uint64_t>(), 0u);
  r = sonde({"traces", log, "--json", "--host", "SRV0", "--limit", "1000000"});
  got = json::parse(r.out);
  ASSERT_GT(got["traces"].size(), 0u);
  for (const json& t : got["traces"]) EXPECT_EQ(t["host"], "SRV0");
  // Start order: ascending.
  for (size_t i = 1; i < got["traces"].size(); ++i) {
    EXPECT_LE(got["traces"][i - 1]["start_ns"].get<int64_t>(),
              got["traces"][i]["start_ns"].get<int64_t>());
  }
}

TEST_F(SondeCli, TracesShowPrintsTheCallTree) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  // A trace Kieker printed in its golden execution traces.
  const std::string golden = slurp(kKieker / "bookstore-oer-2010" / "kieker-trace-analysis-output" /
                                   "executionTraces.txt");
  const std::string id = "6488138950668976141";
  ASSERT_NE(golden.find("TraceId " + id), std::string::npos);
  CliRun r = sonde({"traces", log, "--show", id, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json t = json::parse(r.out);
  EXPECT_EQ(t["trace_id"].get<int64_t>(), std::stoll(id));
  EXPECT_TRUE(t["valid"].get<bool>());
  // Every execution of that trace appears in Kieker's golden text with its eoi and ess.
  const size_t section = golden.find("TraceId " + id);
  const std::string text = golden.substr(section, golden.find("TraceId ", section + 1) - section);
  ASSERT_GT(t["executions"].size(), 0u);
  for (const json& e : t["executions"]) {
    // "<ID[eoi,ess] tin-tout HOST::@N:package.Class.method N/A>"
    const std::string op = e["operation"];
    const std::string line =
        "[" + std::to_string(e["eoi"].get<int>()) + "," + std::to_string(e["ess"].get<int>()) +
        "] " + std::to_string(e["tin_ns"].get<int64_t>()) + "-" +
        std::to_string(e["tout_ns"].get<int64_t>()) + " " + e["host"].get<std::string>() + "::";
    const size_t at = text.find(line);
    ASSERT_NE(at, std::string::npos) << line;
    const std::string rest = text.substr(at, text.find('\n', at) - at);
    EXPECT_NE(rest.find(op.substr(0, op.find('(')) + " "), std::string::npos) << rest;
  }

  r = sonde({"traces", log, "--show", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bookstoreTracing.Bookstore.searchBook()"), std::string::npos);
  EXPECT_NE(r.out.find("inclusive"), std::string::npos);
}

TEST_F(SondeCli, TracesBadInput) {
  const std::string log = (kKieker / "events-2014" / "log").string();
  CliRun r = sonde({"traces", log, "--show", "42"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no trace with id 42"), std::string::npos) << r.err;
  r = sonde({"traces", log, "--show", "abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--show"), std::string::npos) << r.err;
  r = sonde({"traces", log, "--min-duration", "fast"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'fast'"), std::string::npos) << r.err;
  r = sonde({"traces", log, "--sort", "name"});
  EXPECT_EQ(r.exit_code, 2);
  r = sonde({"traces", log, "--summary", "--show", "1"});
  EXPECT_EQ(r.exit_code, 2);
  r = sonde({"traces", (dir_ / "missing").string(), "--summary"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
  const fs::path garbage = dir_ / "garbage.sonde";
  std::ofstream(garbage) << "this is not a log";
  r = sonde({"traces", garbage.string(), "--summary", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("garbage.sonde"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test
