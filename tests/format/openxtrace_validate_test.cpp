// The OPEN.xtrace invariant checks: the published sample passes, the
// paper's Fig. 1(b) timings pass in one reading and are reported (not
// crashed on) in the other, and each structural rule is caught.
#include "format/openxtrace_validate.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace sonde::format {
namespace {

using openxtrace::Json;

const std::string kCallables = "org.spec.research.open.xtrace.api.core.callables.";

// A MethodInvocation starting at `start_ms` lasting `ms`, with callees;
// exclusiveTime as the writer computes it.
Json method(const std::string& name, int64_t start_ms, int64_t ms, std::vector<Json> callees = {}) {
  int64_t callee_ns = 0;
  for (const Json& c : callees) callee_ns += c.value("responseTime", int64_t{0});
  return {{"@class", kCallables + "MethodInvocation"},
          {"methodName", name},
          {"timeStamp", start_ms},
          {"exitTime", start_ms + ms},
          {"responseTime", ms * 1'000'000},
          {"exclusiveTime", ms * 1'000'000 - callee_ns},
          {"children", callees}};
}

Json trace_of(const Json& root_callable) {
  return {{"traceId", 1}, {"rootOfTrace", {{"subTraceId", 1}, {"rootOfSubTrace", root_callable}}}};
}

std::string messages(const std::vector<OpenXtraceIssue>& issues) {
  std::string out;
  for (const auto& i : issues) {
    out += (i.severity == IssueSeverity::kError ? "error " : "warning ") + i.path + ": " +
           i.message + "\n";
  }
  return out;
}

TEST(OpenXtraceValidate, PublishedSampleHasNoErrors) {
  std::ifstream in(std::string(SONDE_TESTDATA_DIR) + "/openxtrace/sample-trace-fork-dialect.json");
  ASSERT_TRUE(in);
  const std::vector<OpenXtraceIssue> issues = validate_openxtrace(in);
  EXPECT_EQ(count_errors(issues), 0u) << messages(issues);
}

// Fig. 1(b) of the OPEN.xtrace paper: doGet 0.2 s > doFilter 0.2 s >
// doSearch 0.15 s > getData 0.13 s > executeQuery 0.13 s, plus
// processData 0.03 s and renderData 0.01 s, whose parent the figure leaves open.
Json figure_1b(bool under_search) {
  Json get_data = method("getData", 10, 130, {method("executeQuery", 10, 130)});
  std::vector<Json> late = {method("processData", 140, 30), method("renderData", 170, 10)};
  std::vector<Json> search_callees = {get_data};
  std::vector<Json> filter_callees;
  if (under_search) {
    search_callees.insert(search_callees.end(), late.begin(), late.end());
    filter_callees = {method("doSearch", 5, 150, search_callees)};
  } else {
    filter_callees = {method("doSearch", 5, 135, search_callees)};
    filter_callees.insert(filter_callees.end(), late.begin(), late.end());
  }
  return trace_of(method("doGet", 0, 200, {method("doFilter", 0, 200, filter_callees)}));
}

TEST(OpenXtraceValidate, FigureOneUnderDoFilterIsConsistent) {
  const std::vector<OpenXtraceIssue> issues = validate_openxtrace_trace(figure_1b(false));
  EXPECT_TRUE(issues.empty()) << messages(issues);
}

TEST(OpenXtraceValidate, FigureOneUnderDoSearchIsReported) {
  // getData 0.13 + processData 0.03 + renderData 0.01 > doSearch 0.15.
  const std::vector<OpenXtraceIssue> issues = validate_openxtrace_trace(figure_1b(true), "/0");
  const std::string text = messages(issues);
  EXPECT_NE(text.find("error /0/rootOfTrace/rootOfSubTrace/children/0/children/0: negative "
                      "exclusiveTime"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("callee ends after its caller"), std::string::npos) << text;
}

TEST(OpenXtraceValidate, StructuralRules) {
  Json db = {{"@class", kCallables + "DatabaseInvocation"},
             {"SQLStatement", "SELECT 1"},
             {"timeStamp", 1},
             {"responseTime", 0},
             {"children", Json::array({method("inner", 1, 0)})}};
  Json http = {{"@class", kCallables + "HTTPRequestProcessing"}, {"uri", "/x"}};
  Json root = method("root", 0, 10, {db, http});
  root["children"][1]["children"] = Json::array();
  Json trace = trace_of(root);
  // The same sub-trace id twice.
  Json remote = {{"@class", kCallables + "RemoteInvocation"},
                 {"targetSubTrace", {{"subTraceId", 1}, {"rootOfSubTrace", method("far", 2, 1)}}}};
  trace["rootOfTrace"]["rootOfSubTrace"]["children"].push_back(remote);
  trace["rootOfTrace"]["rootOfSubTrace"]["exitTime"] = 99;  // 99 ms, but 10 ms responseTime
  const std::string text = messages(validate_openxtrace_trace(trace));
  EXPECT_NE(text.find("error /rootOfTrace/rootOfSubTrace/children/0: DatabaseInvocation cannot "
                      "have callees"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("warning /rootOfTrace/rootOfSubTrace/children/1: HTTPRequestProcessing "
                      "below the sub-trace root"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sub-trace id 1 repeated"), std::string::npos) << text;
  EXPECT_NE(text.find("exitTime - timeStamp is 99 ms but responseTime is 10000000 ns"),
            std::string::npos)
      << text;
}

TEST(OpenXtraceValidate, MissingRootsAndMalformedJsonAreErrors) {
  EXPECT_EQ(messages(validate_openxtrace_trace(Json::object())),
            "error : no root sub-trace (rootOfTrace)\n");
  EXPECT_EQ(messages(validate_openxtrace_trace({{"rootOfTrace", {{"host", "h"}}}})),
            "error /rootOfTrace: no root callable (rootOfSubTrace)\n");
  std::istringstream bad("[{\"rootOfTrace\": ");
  const std::vector<OpenXtraceIssue> issues = validate_openxtrace(bad);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("byte "), std::string::npos);
}

}  // namespace
}  // namespace sonde::format
