// Text and CSV reporters over a hand-made analysis result.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/render/report_csv.hpp"
#include "analysis/render/report_text.hpp"
#include "analysis/text/text_table.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

AnalysisResult small_result() {
  TraceAnalysis analysis;
  testing::RecordFeeder feed(analysis.records());
  feed.metadata(1);
  feed.before(1, 0, 0, "void work(int, char)");
  feed.before(1, 1, 1000, "void \"quoted\",name()");
  feed.after(1, 2, 3000, "void \"quoted\",name()");
  feed.after(1, 3, 10'000, "void work(int, char)");
  feed.metadata(2);
  feed.before(2, 0, 0, "lost");
  AnalysisResult r = analysis.finish();
  r.path = "/logs/run1";
  r.kind = format::LogKind::kNative;
  r.read.records = 7;
  return r;
}

TEST(TextReport, SummarisesTracesReasonsAndOperations) {
  const AnalysisResult r = small_result();
  std::ostringstream out;
  write_text_report(out, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("/logs/run1 (native sonde log)"), std::string::npos) << text;
  EXPECT_NE(text.find("Traces:    2 (1 valid, 1 invalid)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 x missing-after-event, e.g. trace 2: missing after event for op lost"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("10.0 µs"), std::string::npos) << text;  // work's inclusive time
  EXPECT_NE(text.find("8.00 µs"), std::string::npos) << text;  // work's exclusive time
  EXPECT_EQ(text.find("LOST EVENTS"), std::string::npos);
  // Sorted by total inclusive time: work before the callee.
  EXPECT_LT(text.find("void work(int, char)"), text.find("void \"quoted\",name()"));
}

TEST(TextReport, LostEventsComeFirstAndLoud) {
  AnalysisResult r = small_result();
  r.read.lost_reported = 1234;
  std::ostringstream out;
  write_text_report(out, r);
  const std::string text = out.str();
  const size_t banner = text.find("LOST EVENTS: the monitor reported 1234 events lost");
  ASSERT_NE(banner, std::string::npos) << text;
  EXPECT_LT(banner, text.find("Log:"));
}

TEST(TextReport, AFlightRecorderSnapshotSaysWhyItWasTaken) {
  AnalysisResult r = small_result();
  std::ostringstream plain;
  write_text_report(plain, r);
  EXPECT_EQ(plain.str().find("Snapshot:"), std::string::npos) << "an ordinary log has none";
  r.read.snapshot_reasons = {"sonde_snapshot(deploy)", "fatal signal"};
  std::ostringstream out;
  write_text_report(out, r);
  const std::string text = out.str();
  const size_t first = text.find("Snapshot:  sonde_snapshot(deploy)\n");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_LT(text.find("Log:"), first);
  EXPECT_NE(text.find("Snapshot:  fatal signal\n"), std::string::npos) << text;
}

TEST(TextReport, TopLimitsTheOperations) {
  const AnalysisResult r = small_result();
  std::ostringstream out;
  write_text_report(out, r, {1});
  EXPECT_NE(out.str().find("(top 1 of 2)"), std::string::npos);
  EXPECT_EQ(out.str().find("quoted"), std::string::npos);
}

TEST(CsvReport, QuotesFieldsAndPrintsNanoseconds) {
  const AnalysisResult r = small_result();
  std::ostringstream out;
  write_operations_csv(out, r.operations);
  std::istringstream lines(out.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("host,component,operation,count,failed,incl_total_ns,", 0), 0u);
  EXPECT_EQ(first.rfind(",C,\"void work(int, char)\",1,0,10000,10000,0,10000,", 0), 0u) << first;
  EXPECT_NE(second.find("\"void \"\"quoted\"\",name()\""), std::string::npos) << second;
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
}

TEST(TextTable, AlignsUtf8ByCharacters) {
  TextTable t({"time", "name"});
  t.add_row({"1.00 µs", "a"});
  t.add_row({"10 ns", "b"});
  std::ostringstream out;
  t.write(out, "");
  EXPECT_EQ(out.str(), "   time  name\n1.00 µs  a\n  10 ns  b\n");
  EXPECT_EQ(display_width("µs"), 2u);
}

}  // namespace
}  // namespace sonde::analysis
