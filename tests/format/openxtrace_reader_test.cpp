// The OPEN.xtrace reader on the published sample (fork dialect), on an
// inspectIT-dialect variant derived from it, on several layouts, and on
// malformed input: truncated, wrong-typed, too deeply nested.
#include "format/openxtrace_reader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "format/callable_schemas.hpp"
#include "format/log_reader.hpp"
#include "format/openxtrace_json.hpp"
#include "format/schema.hpp"

namespace sonde::format {
namespace {
namespace fs = std::filesystem;
using openxtrace::Json;

const std::string kSample =
    std::string(SONDE_TESTDATA_DIR) + "/openxtrace/sample-trace-fork-dialect.json";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string scratch(const std::string& name, const std::string& content) {
  fs::path p = fs::path(SONDE_BINARY_DIR) / "test-output" / "openxtrace" / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
  return p.string();
}

std::string value_text(const Value& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const double* d = std::get_if<double>(&v)) return std::to_string(*d);
  if (const std::string_view* s = std::get_if<std::string_view>(&v)) return std::string(*s);
  std::string out = "[";
  for (std::string_view s : std::get<std::vector<std::string_view>>(v)) out += std::string(s) + ",";
  return out + "]";
}

// "SimpleClass a|b|c" per record.
class Lines : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    EXPECT_TRUE(values_match_schema(r)) << r.schema->class_name;
    std::string cls = r.schema->class_name.substr(r.schema->class_name.rfind('.') + 1);
    std::string line = cls + " ";
    for (size_t i = 0; i < r.values.size(); ++i) line += (i ? "|" : "") + value_text(r.values[i]);
    lines.push_back(line);
    return true;
  }
  std::vector<std::string> lines;
};

LogReadStats read_text(const std::string& json, Lines& out) {
  std::istringstream in(json);
  return read_openxtrace(in, "test.json", out);
}

std::string first_error(const LogReadStats& s) { return s.errors.empty() ? "" : s.errors[0]; }

TEST(OpenXtraceReader, SampleBecomesTwoLinkedTracesWithItsCallables) {
  ASSERT_EQ(detect_log_kind(kSample), LogKind::kOpenXtrace);
  Lines out;
  LogReadStats stats = read_log(kSample, out);
  ASSERT_TRUE(stats.ok) << first_error(stats);
  // Root sub-trace: its root callable is a RemoteInvocation, so an
  // execution stands for it; the target sub-trace continues it.
  const std::vector<std::string> expected = {
      "KiekerMetadataRecord OPEN.xtrace|openxtrace|<default-host>|1|false|0|NANOSECONDS|0",
      "TraceMetadata 69786786986|-1|<no-session-id>|<default-host>|69786786986|-1",
      "BeforeOperationEvent 0|69786786986|0|<RemoteInvocation>|",
      "RemoteCall 0|69786786986|0|-1|null | Optional.empty | Optional.empty | "
      "Optional.empty|273648111873",
      "AfterOperationEvent 0|69786786986|1|<RemoteInvocation>|",
      "TraceMetadata 273648111873|-1|<no-session-id>|<default-host>|69786786986|0",
      "BeforeOperationEvent 0|273648111873|0|<HTTPRequestProcessing>|HTTPRequestProcessing",
      "HttpRequest 0|273648111873|0|||200|[]|[]|[]|[]|[]|",
      "BeforeOperationEvent 0|273648111873|1|methodName|",
      "DatabaseCall 0|273648111873|1|-1||false|||[]|||",
      "AfterOperationEvent 0|273648111873|2|methodName|",
      "AfterOperationEvent 0|273648111873|3|<HTTPRequestProcessing>|HTTPRequestProcessing",
  };
  EXPECT_EQ(out.lines, expected);
  EXPECT_EQ(stats.records, expected.size());
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_NE(stats.warnings[0].find("1 sub-traces have no method at their root"), std::string::npos);
}

// The inspectIT exporter's conventions: "undefined" for missing strings,
// "rootOfSubtrace", no port, additional information keys without a dot.
void to_inspectit_dialect(Json& j) {
  static const std::vector<std::string> kStrings = {
      "threadName",       "signature", "returnType",          "packageName",  "methodName",
      "className",        "host",      "application",         "serverName",   "runtimeEnvironment",
      "nodeType",         "uri",       "businessTransaction", "SQLStatement", "dbProductName",
      "dbProductVersion", "dbURL"};
  std::vector<Json*> todo = {&j};
  while (!todo.empty()) {
    Json* node = todo.back();
    todo.pop_back();
    if (node->is_array()) {
      for (Json& item : *node) todo.push_back(&item);
      continue;
    }
    if (!node->is_object()) continue;
    for (const std::string& k : kStrings) {
      if (node->contains(k) && (*node)[k].is_null()) (*node)[k] = "undefined";
    }
    node->erase("port");
    if (node->contains("rootOfSubTrace")) {
      (*node)["rootOfSubtrace"] = std::move((*node)["rootOfSubTrace"]);
      node->erase("rootOfSubTrace");
    }
    for (auto& [k, v] : node->items()) todo.push_back(&v);
  }
}

TEST(OpenXtraceReader, InspectItDialectReadsLikeTheForkDialect) {
  Json sample = Json::parse(read_file(kSample));
  Lines fork;
  ASSERT_TRUE(read_text(sample.dump(), fork).ok);
  to_inspectit_dialect(sample);
  const std::string text = sample.dump();
  ASSERT_NE(text.find("\"rootOfSubtrace\""), std::string::npos);
  ASSERT_NE(text.find("\"undefined\""), std::string::npos);
  Lines inspectit;
  LogReadStats stats = read_text(text, inspectit);
  ASSERT_TRUE(stats.ok) << first_error(stats);
  EXPECT_EQ(inspectit.lines, fork.lines);
}

TEST(OpenXtraceReader, ArraysOfTracesAndTracesOneAfterAnother) {
  const std::string one = read_file(kSample);
  Lines single;
  ASSERT_TRUE(read_text(one, single).ok);
  Lines array;
  LogReadStats a = read_text("[" + one + ",\n" + one + "]", array);
  ASSERT_TRUE(a.ok) << first_error(a);
  Lines lines;
  LogReadStats l =
      read_text(Json::parse(one).dump() + "\n" + Json::parse(one).dump() + "\n", lines);
  ASSERT_TRUE(l.ok) << first_error(l);
  // Both: the metadata record once, then the sample's records twice.
  EXPECT_EQ(array.lines.size(), 2 * single.lines.size() - 1);
  EXPECT_EQ(lines.lines, array.lines);
}

TEST(OpenXtraceReader, CallableFieldsAndFailuresAreKept) {
  const std::string trace = R"([{"traceId": 5, "rootOfTrace": {"subTraceId": 5, "host": "srv1",
    "rootOfSubTrace": {"@class": "org.spec.research.open.xtrace.api.core.callables.HTTPRequestProcessing",
      "timeStamp": 1000, "responseTime": 9000000, "threadID": 42, "uri": "/cart",
      "requestMethod": "POST", "responseCode": 500, "HTTPHeaders": {"Host": "shop"},
      "HTTPParameters": {"id": ["1", "2"]}, "children": [
      {"@class": "org.spec.research.open.xtrace.api.core.callables.MethodInvocation",
       "timeStamp": 1001, "responseTime": 5000000, "packageName": "a.b", "className": "Cart",
       "methodName": "add", "parameterTypes": ["int", "java.lang.String"], "returnType": "void",
       "children": [
        {"@class": "org.spec.research.open.xtrace.api.core.callables.DatabaseInvocation",
         "timeStamp": 1002, "responseTime": 1000000, "SQLStatement": "SELECT 1 FROM t WHERE id = ?",
         "prepared": true, "parameterBindings": {"1": "7"}, "dbProductName": "H2", "dbURL": "jdbc:h2:mem"},
        {"@class": "org.spec.research.open.xtrace.api.core.callables.LoggingInvocation",
         "timeStamp": 1003, "loggingLevel": "WARN", "message": "slow"},
        {"@class": "org.spec.research.open.xtrace.api.core.callables.ExceptionThrow",
         "timeStamp": 1005, "errorMessage": "boom", "throwableType": "java.lang.IllegalStateException",
         "additionalInformation.sonde.propagated": true}]}]}}}])";
  Lines out;
  LogReadStats stats = read_text(trace, out);
  ASSERT_TRUE(stats.ok) << first_error(stats);
  const std::vector<std::string> expected = {
      "KiekerMetadataRecord OPEN.xtrace|openxtrace|srv1|1|false|0|NANOSECONDS|0",
      "TraceMetadata 5|42|<no-session-id>|srv1|5|-1",
      "BeforeOperationEvent 1000000000|5|0|POST /cart|HTTPRequestProcessing",
      "HttpRequest 1000000000|5|0|/cart|POST|500|[Host,shop,]|[id,1,id,2,]|[]|[]|[]|",
      "BeforeOperationEvent 1001000000|5|1|void a.b.Cart.add(int, java.lang.String)|a.b.Cart",
      "DatabaseCall 1002000000|5|1|1000000|SELECT 1 FROM t WHERE id = "
      "?|true|||[7,]|H2||jdbc:h2:mem",
      "LogMessage 1003000000|5|1|WARN|slow",
      "ExceptionThrow 1005000000|5|1|java.lang.IllegalStateException|boom|||true",
      "AfterOperationFailedEvent 1006000000|5|2|void a.b.Cart.add(int, java.lang.String)|a.b.Cart|"
      "boom",
      "AfterOperationEvent 1009000000|5|3|POST /cart|HTTPRequestProcessing",
  };
  EXPECT_EQ(out.lines, expected);
}

TEST(OpenXtraceReader, TruncatedFileNamesTheFileAndByteAndKeepsEarlierTraces) {
  const std::string one = Json::parse(read_file(kSample)).dump();
  const std::string text = "[" + one + "," + one.substr(0, one.size() / 2);
  const std::string path = scratch("truncated.json", text);
  ASSERT_EQ(detect_log_kind(path), LogKind::kOpenXtrace);
  Lines out;
  LogReadStats stats = read_log(path, out);
  EXPECT_FALSE(stats.ok);
  ASSERT_EQ(stats.errors.size(), 1u);
  EXPECT_NE(stats.errors[0].find(path + ": byte "), std::string::npos) << stats.errors[0];
  EXPECT_NE(stats.errors[0].find("syntax error"), std::string::npos) << stats.errors[0];
  EXPECT_EQ(out.lines.size(), 12u)
      << "the complete first trace is delivered, nothing of the second";
}

TEST(OpenXtraceReader, WrongTypeNamesTheJsonPathAndSkipsOnlyThatTrace) {
  Json bad = Json::parse(read_file(kSample));
  bad["rootOfTrace"]["rootOfSubTrace"]["targetSubTrace"]["rootOfSubTrace"]["children"][0]
     ["timeStamp"] = "yesterday";
  const Json good = Json::parse(read_file(kSample));
  Lines out;
  LogReadStats stats = read_text(Json::array({bad, good}).dump(), out);
  EXPECT_FALSE(stats.ok);
  ASSERT_EQ(stats.errors.size(), 1u);
  EXPECT_EQ(stats.errors[0],
            "test.json: trace skipped: /0/rootOfTrace/rootOfSubTrace/targetSubTrace/"
            "rootOfSubTrace/children/0/timeStamp: expected a number, got a string");
  EXPECT_EQ(out.lines.size(), 12u) << "the second trace is read whole";
}

TEST(OpenXtraceReader, StructuralErrorsAreReportedNotCrashedOn) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1]", "/0: expected a trace object, got a number"},
      {"[{}]", "/0: the trace has no rootOfTrace"},
      {R"([{"rootOfTrace": []}])", "/0/rootOfTrace: expected a sub-trace object, got an array"},
      {R"([{"rootOfTrace": {"host": "h"}}])",
       "/0/rootOfTrace: the sub-trace has no rootOfSubTrace"},
      {R"([{"rootOfTrace": {"rootOfSubTrace": {"methodName": "m", "children": {}}}}])",
       "/0/rootOfTrace/rootOfSubTrace/children: expected an array, got an object"},
      {R"([{"rootOfTrace": {"rootOfSubTrace": {"methodName": "m", "children": [7]}}}])",
       "/0/rootOfTrace/rootOfSubTrace/children/0: expected a callable object, got a number"},
      {R"([{"rootOfTrace": {"host": 3, "rootOfSubTrace": {"methodName": "m"}}}])",
       "/0/rootOfTrace/host: expected a string, got a number"},
      {R"([{"rootOfTrace": {"rootOfSubTrace": {"methodName": "m", "timeStamp": 1e300}}}])",
       "/0/rootOfTrace/rootOfSubTrace/timeStamp: number out of range"},
      {R"([{"rootOfTrace": {"rootOfSubTrace": {"methodName": "m", "timeStamp": 9223372036855}}}])",
       "/0/rootOfTrace/rootOfSubTrace: timestamp out of range"},
  };
  for (const auto& [text, error] : cases) {
    Lines out;
    LogReadStats stats = read_text(text, out);
    EXPECT_FALSE(stats.ok) << text;
    EXPECT_EQ(first_error(stats), "test.json: trace skipped: " + error) << text;
    EXPECT_TRUE(out.lines.empty()) << text;
  }
}

TEST(OpenXtraceReader, MalformedJsonIsAnErrorWithItsPosition) {
  for (const std::string text :
       {"", "[", "[{\"a\": }]", "[{\"a\": 1,}]",
        "{\"rootOfTrace\": {\"rootOfSubTrace\": {\"methodName\": \"m\"}}} x"}) {
    Lines out;
    LogReadStats stats = read_text(text, out);
    EXPECT_FALSE(stats.ok) << text;
    EXPECT_NE(first_error(stats).find("test.json: byte "), std::string::npos)
        << text << " -> " << first_error(stats);
  }
}

TEST(OpenXtraceReader, NestingBeyondTheLimitIsRejected) {
  const size_t levels = openxtrace::kMaxOpenXtraceNesting + 1000;
  const std::string deep = std::string(levels, '[') + std::string(levels, ']');
  Lines out;
  LogReadStats stats = read_text(deep, out);
  EXPECT_FALSE(stats.ok);
  const std::string expected =
      "nesting deeper than " + std::to_string(openxtrace::kMaxOpenXtraceNesting) + " levels";
  EXPECT_NE(first_error(stats).find(expected), std::string::npos) << first_error(stats);
}

TEST(OpenXtraceReader, DeepButValidCallChainsAreRead) {
  // 20000 nested MethodInvocations: no recursion anywhere on the way.
  const int depth = 20000;
  std::string text = R"([{"traceId": 1, "rootOfTrace": {"rootOfSubTrace": )";
  for (int i = 0; i < depth; ++i) text += R"({"methodName": "f", "children": [)";
  for (int i = 0; i < depth; ++i) text += "]}";
  text += "}}]";
  Lines out;
  LogReadStats stats = read_text(text, out);
  ASSERT_TRUE(stats.ok) << first_error(stats);
  EXPECT_EQ(out.lines.size(), 2u + 2 * depth);
}

TEST(OpenXtraceReader, OtherJsonIsNotTakenForOpenXtrace) {
  const std::string path = scratch("other.json", R"({"traces": [1, 2, 3]})");
  EXPECT_EQ(detect_log_kind(path), LogKind::kUnknown);
  Lines out;
  LogReadStats stats = read_log(path, out);
  EXPECT_FALSE(stats.ok);
  EXPECT_NE(first_error(stats).find("OPEN.xtrace"), std::string::npos);
}

}  // namespace
}  // namespace sonde::format
