// Runs the built `sonde` binary: `sonde summary` and `sonde graph` on the
// Kieker test logs and on bad input, checking exit status (0 ok, 1 input
// unreadable, 2 usage) and that error messages name the file.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

TEST_F(SondeCli, SummaryOfBookstoreLog) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  const CliRun r = sonde({"summary", log});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Kieker filesystem log"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Records:   6541 read"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Traces:    1635 (1635 valid, 0 invalid)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bookstoreTracing.Bookstore.searchBook()"), std::string::npos);
  EXPECT_NE(r.out.find(" ms "), std::string::npos);  // durations carry units
  EXPECT_EQ(r.out.find("LOST EVENTS"), std::string::npos);
  // The heaviest operation (the entry) comes first.
  EXPECT_LT(r.out.find("Bookstore.searchBook"), r.out.find("Catalog.getBook"));
}

TEST_F(SondeCli, SummaryFormatsAndTop) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  CliRun r = sonde({"summary", log, "--format", "json", "--top", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"valid\": 1635"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"operation\": \"bookstoreTracing.Bookstore.searchBook()\""),
            std::string::npos);
  EXPECT_EQ(r.out.find("getOffers"), std::string::npos);  // --top 1

  r = sonde({"summary", log, "--format", "csv", "--top", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, 3u) << r.out;
  EXPECT_EQ(r.out.rfind("host,component,operation,count,failed,", 0), 0u);
  EXPECT_NE(r.out.find(",bookstoreTracing.Catalog,bookstoreTracing.Catalog.getBook(boolean),3270,"),
            std::string::npos)
      << r.out;
}

TEST_F(SondeCli, SummaryOfFlowEventLog) {
  const CliRun r = sonde({"summary", (kKieker / "events-2014" / "log").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Traces:    2 (2 valid, 0 invalid)"), std::string::npos) << r.out;
}

TEST_F(SondeCli, MissingLogExitsOneAndNamesThePath) {
  const std::string missing = (dir_ / "no-such-log").string();
  for (const char* cmd : {"summary", "graph"}) {
    std::vector<std::string> args = {cmd, missing};
    if (std::string(cmd) == "graph") {
      args.insert(args.end(), {"--kind", "calltree", "--out", (dir_ / "x.dot").string()});
    }
    const CliRun r = sonde(args);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  }
}

TEST_F(SondeCli, DirectoryWithoutLogsExitsOne) {
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  std::ofstream(empty / "notes.txt") << "not a log\n";
  const CliRun r = sonde({"summary", empty.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(empty.string()), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(SondeCli, GarbageFileExitsOne) {
  const fs::path garbage = dir_ / "garbage.sonde";
  std::ofstream(garbage) << "\x01\x02 this is not a log";
  const CliRun r = sonde({"summary", garbage.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(garbage.string()), std::string::npos) << r.err;
}

TEST_F(SondeCli, UsageErrorsExitTwo) {
  const std::string log = (kKieker / "events-2014" / "log").string();
  const std::string out = (dir_ / "g.dot").string();
  const std::vector<std::vector<std::string>> cases = {
      {"summary"},
      {"summary", log, "--format", "xml"},
      {"summary", log, "--top", "many"},
      {"graph", log, "--out", out},
      {"graph", log, "--kind", "flame", "--out", out},
      {"graph", log, "--kind", "calltree"},
      {"graph", log, "--kind", "calltree", "--out", (dir_ / "g.txt").string()},
      {"graph", log, "--kind", "calltree", "--out", out, "--level", "galaxy"},
  };
  for (const auto& args : cases) {
    const CliRun r = sonde(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << joined;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(SondeCli, GraphWritesDotAndSvg) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  const fs::path dot = dir_ / "dependency.dot";
  CliRun r = sonde({"graph", log, "--kind", "dependency", "--out", dot.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(dot);
  EXPECT_EQ(text.rfind("digraph G {", 0), 0u);
  EXPECT_NE(text.find("[label=\"1635\""), std::string::npos) << text;
  EXPECT_NE(text.find("SRV1"), std::string::npos);

  const fs::path svg = dir_ / "calltree.svg";
  r = sonde({"graph", log, "--kind", "calltree", "--out", svg.string(), "--level", "assembly"});
  if (::access("/usr/bin/dot", X_OK) != 0 && r.exit_code == 1) {
    EXPECT_NE(r.err.find("graphviz"), std::string::npos) << r.err;
    GTEST_SKIP() << "Graphviz 'dot' is not installed";
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(svg).find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace sonde::test
