// Runs the built `sonde flame` on the Kieker bookstore log and on bad input:
// the SVG is well-formed XML with the log's operations in it, the folded
// stacks sum to the log's exclusive times, and exit status (0 ok, 1 input
// unreadable or output unwritable, 2 usage) with messages naming the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/model/call_tree.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "sonde_cli_fixture.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kFlameBookstore =
    (fs::path(SONDE_TESTDATA_DIR) / "kieker" / "bookstore-oer-2010" / "log").string();

using sonde::test::CliRun;
using sonde::test::slurp;

class SondeFlame : public sonde::test::SondeCli {};

// Sum of the exclusive times of the log's valid traces, computed here.
int64_t bookstore_exclusive_sum() {
  struct Sum : sonde::analysis::TraceSink {
    void on_trace(const sonde::analysis::Trace& t) override {
      for (int64_t v : exclusive_durations(t, build_call_tree(t))) sum += std::max<int64_t>(v, 0);
    }
    void on_invalid_trace(const sonde::analysis::InvalidTrace&) override {}
    int64_t sum = 0;
  } sum;
  sonde::analysis::TraceAnalysis analysis;
  analysis.add_sink(sum);
  sonde::format::read_log(kFlameBookstore, analysis.records());
  analysis.finish();
  return sum.sum;
}

TEST_F(SondeFlame, SvgOfBookstoreLog) {
  const fs::path svg = dir_ / "flame.svg";
  const CliRun r =
      sonde({"flame", kFlameBookstore, "--out", svg.string(), "--title", "Books <&> \"x\""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(svg);
  EXPECT_EQ(text.rfind("<?xml", 0), 0u);
  EXPECT_NE(text.find("Catalog.getBook(..)"), std::string::npos);
  EXPECT_NE(text.find("Bookstore.searchBook()"), std::string::npos);
  EXPECT_NE(text.find("Books &lt;&amp;&gt; &quot;x&quot;"), std::string::npos);
  EXPECT_NE(text.find("1635 traces"), std::string::npos);
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(("xmllint --noout '" + svg.string() + "'").c_str()), 0);
  }
}

TEST_F(SondeFlame, FoldedStacksSumToTheExclusiveTimes) {
  const fs::path folded = dir_ / "stacks.folded";
  const CliRun r = sonde({"flame", kFlameBookstore, "--out", folded.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(slurp(folded));
  int64_t sum = 0;
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    sum += std::stoll(line.substr(space + 1));
  }
  EXPECT_GT(lines, 0);
  EXPECT_EQ(sum, bookstore_exclusive_sum());
}

TEST_F(SondeFlame, OptionsChangeThePicture) {
  const fs::path svg = dir_ / "icicle.svg";
  const CliRun r = sonde({"flame", kFlameBookstore, "--out", svg.string(), "--icicle",
                          "--no-script", "--full-labels", "--min-width", "50%", "--width", "800"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(svg);
  EXPECT_EQ(text.find("<script"), std::string::npos);
  EXPECT_NE(text.find("data-icicle=\"true\""), std::string::npos);
  EXPECT_NE(text.find("width=\"800\""), std::string::npos);
  // Frames under half the width are gone: getOffers (31 %) and getBook are.
  EXPECT_EQ(text.find("getOffers"), std::string::npos);
  EXPECT_NE(text.find("bookstoreTracing.Bookstore.searchBook()"), std::string::npos);

  const fs::path focused = dir_ / "focus.folded";
  ASSERT_EQ(sonde({"flame", kFlameBookstore, "--out", focused.string(), "--focus", "getOffers"})
                .exit_code,
            0);
  std::istringstream in(slurp(focused));
  for (std::string line; std::getline(in, line);) {
    EXPECT_NE(line.find("CRM.getOffers()"), std::string::npos) << line;
  }
}

TEST_F(SondeFlame, UsageErrorsExitWith2) {
  const std::string out = (dir_ / "x.svg").string();
  CliRun r = sonde({"flame", kFlameBookstore});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  r = sonde({"flame", "--out", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("LOG"), std::string::npos) << r.err;
  r = sonde({"flame", kFlameBookstore, "--out", (dir_ / "x.png").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("x.png"), std::string::npos) << r.err;
  r = sonde({"flame", kFlameBookstore, "--out", out, "--min-width", "wide"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("wide"), std::string::npos) << r.err;
  r = sonde({"flame", kFlameBookstore, "--out", out, "--width", "5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(SondeFlame, MissingLogOrUnwritableOutputExitWith1NamingTheFile) {
  const std::string missing = (dir_ / "no-such-log").string();
  CliRun r = sonde({"flame", missing, "--out", (dir_ / "x.svg").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;

  const std::string unwritable = (dir_ / "no-such-dir" / "x.folded").string();
  r = sonde({"flame", kFlameBookstore, "--out", unwritable});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(unwritable), std::string::npos) << r.err;
}

}  // namespace
