// OpenXtraceWriter and the reader together: records of a stitched trace
// (threads, processes, an orphan, a failure, database and HTTP callables)
// written as OPEN.xtrace, validated, read back into records, reconstructed
// and stitched again: the trace tree, parent links and timings survive,
// and writing the result again gives the same document.
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/export/openxtrace_method_names.hpp"
#include "analysis/export/openxtrace_writer.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "analysis/reconstruct/trace_stitcher.hpp"
#include "format/callable_schemas.hpp"
#include "format/openxtrace_reader.hpp"
#include "format/openxtrace_validate.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

using format::openxtrace::Json;

class Tee : public format::RecordSink {
 public:
  Tee(format::RecordSink& a, format::RecordSink& b) : a_(a), b_(b) {}
  bool on_record(const format::Record& r) override {
    a_.on_record(r);
    b_.on_record(r);
    return true;
  }

 private:
  format::RecordSink& a_;
  format::RecordSink& b_;
};

class Keep : public StitchedTraceSink {
 public:
  void on_stitched_trace(const StitchedTrace& t) override { traces.push_back(t); }
  std::vector<StitchedTrace> traces;
};

// Records -> reconstruction -> stitching -> OPEN.xtrace text; the stitched
// traces are kept too (their strings live in `strings`).
struct Pipeline {
  Pipeline()
      : writer(out),
        fan(keep, writer),
        stitcher(fan, no_timeout()),
        rec(stitcher),
        tee(rec, writer.callable_records()) {}
  static StitchingOptions no_timeout() {
    StitchingOptions o;
    o.child_timeout_ns = 0;
    return o;
  }
  std::string finish() {
    rec.finish();
    stitcher.finish();
    writer.finish();
    return out.str();
  }
  struct Fan : StitchedTraceSink {
    Fan(StitchedTraceSink& a, StitchedTraceSink& b) : a_(a), b_(b) {}
    void on_stitched_trace(const StitchedTrace& t) override {
      a_.on_stitched_trace(t);
      b_.on_stitched_trace(t);
    }
    StitchedTraceSink& a_;
    StitchedTraceSink& b_;
  };
  std::ostringstream out;
  Keep keep;
  OpenXtraceWriter writer;
  Fan fan;
  TraceStitcher stitcher;
  TraceReconstructor rec;
  Tee tee;
};

// Builds records like those a sonde log holds.
class LogBuilder {
 public:
  explicit LogBuilder(format::RecordSink& sink) : sink_(sink) {}
  void metadata(int64_t trace, const std::string& host, int64_t thread, int64_t parent = -1,
                int32_t parent_order = -1) {
    emit(format::kieker_class::kTraceMetadata,
         {trace, thread, s("<no-session-id>"), s(host), parent < 0 ? trace : parent,
          int64_t{parent_order}});
  }
  void before(int64_t trace, int32_t order, int64_t ts, const std::string& op,
              const std::string& cls) {
    emit(format::kieker_class::kBeforeOperation, {ts, trace, int64_t{order}, s(op), s(cls)});
  }
  void after(int64_t trace, int32_t order, int64_t ts, const std::string& op,
             const std::string& cls) {
    emit(format::kieker_class::kAfterOperation, {ts, trace, int64_t{order}, s(op), s(cls)});
  }
  void failed(int64_t trace, int32_t order, int64_t ts, const std::string& op,
              const std::string& cls, const std::string& cause) {
    emit(format::kieker_class::kAfterOperationFailed,
         {ts, trace, int64_t{order}, s(op), s(cls), s(cause)});
  }
  void database(int64_t trace, int32_t order, int64_t ts, int64_t duration,
                const std::string& sql) {
    emit(format::callable_class::kDatabaseCall,
         {ts, trace, int64_t{order}, duration, s(sql), true, s(""), s(""),
          std::vector<std::string_view>{s("42")}, s("SQLite"), s("3"), s("file:shop.db")});
  }
  void http(int64_t trace, int32_t order, int64_t ts, const std::string& uri) {
    using V = std::vector<std::string_view>;
    emit(format::callable_class::kHttpRequest,
         {ts, trace, int64_t{order}, s(uri), s("GET"), int64_t{200}, V{s("Accept"), s("*/*")},
          V{s("q"), s("1"), s("q"), s("2")}, V{}, V{}, V{}, s("")});
  }
  void log(int64_t trace, int32_t order, int64_t ts, const std::string& message) {
    emit(format::callable_class::kLogMessage, {ts, trace, int64_t{order}, s("INFO"), s(message)});
  }

 private:
  void emit(std::string_view cls, std::vector<format::Value> values) {
    format::Record r;
    r.schema = format::find_builtin_schema(cls);
    ASSERT_NE(r.schema, nullptr) << cls;
    r.values = std::move(values);
    ASSERT_TRUE(format::values_match_schema(r)) << cls;
    sink_.on_record(r);
  }
  std::string_view s(const std::string& text) { return storage_.emplace_back(text); }
  format::RecordSink& sink_;
  std::deque<std::string> storage_;
};

// A request across two threads and two processes, an orphan, a failure.
void build_log(format::RecordSink& sink) {
  LogBuilder b(sink);
  const int64_t t0 = 1'700'000'000'123'456'789;
  // Trace 100 on srv1: main { a { db } b (fails) }, its context captured
  // after a returned (order index 4) and continued by trace 200 on srv2.
  b.metadata(100, "srv1", 11);
  b.before(100, 0, t0, "void shop.Main.main()", "shop.Main");
  b.before(100, 1, t0 + 1'000, "int shop.Cart.a(int, java.lang.String)", "shop.Cart");
  b.database(100, 1, t0 + 1'500, 2'345, "SELECT * FROM t WHERE id = ?");
  b.after(100, 2, t0 + 5'000, "int shop.Cart.a(int, java.lang.String)", "shop.Cart");
  b.log(100, 2, t0 + 5'100, "a done");
  b.before(100, 3, t0 + 6'000, "shop.b()", "shop");
  b.failed(100, 4, t0 + 7'777, "shop.b()", "shop", "std::runtime_error: out of stock");
  // Trace 200 on srv2 (another process), an HTTP request handled there.
  b.metadata(200, "srv2", 21, 100, 4);
  b.before(200, 0, t0 + 8'000, "void srv.Handler.get()", "srv.Handler");
  b.http(200, 0, t0 + 8'000, "/cart/7");
  b.before(200, 1, t0 + 8'500, "srv.helper()", "srv");
  b.after(200, 2, t0 + 9'000, "srv.helper()", "srv");
  // Trace 300: a helper thread of 200, captured at its order index 2.
  b.metadata(300, "srv2", 22, 200, 2);
  b.before(300, 0, t0 + 9'100, "srv.async()", "srv");
  b.after(300, 1, t0 + 9'200, "srv.async()", "srv");
  b.after(200, 3, t0 + 20'000, "void srv.Handler.get()", "srv.Handler");
  b.after(100, 5, t0 + 30'000, "void shop.Main.main()", "shop.Main");
  // Trace 400: its parent (999) is in a log nobody read.
  b.metadata(400, "srv3", 31, 999, 7);
  b.before(400, 0, t0 + 40'000, "ns.Tpl<int| char>.run()", "ns::Tpl<int| char>");
  b.after(400, 1, t0 + 41'000, "ns.Tpl<int| char>.run()", "ns::Tpl<int| char>");
}

std::string shape(const StitchedTrace& t) {
  std::ostringstream s;
  for (const SubTrace& p : t.parts) {
    const Trace& x = p.trace;
    s << "part " << x.trace_id << " parent " << p.parent << "@" << p.parent_execution << " links "
      << x.parent_trace_id << "/" << x.parent_order_id << " host " << x.host << " thread "
      << x.thread_id << "\n";
    for (const Execution& e : x.executions) {
      s << "  " << e.eoi << "," << e.ess << " " << e.operation << " [" << e.component << "] "
        << e.tin << ".." << e.tout << " order " << e.order_index << "/" << e.exit_order_index
        << (e.failed ? " failed: " + std::string(e.cause) : "") << "\n";
    }
  }
  return s.str();
}

// Callable records read back, as text.
class CallableLines : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    if (r.schema->class_name.rfind("sonde.record.", 0) != 0) return true;
    std::string line = r.schema->class_name;
    for (const format::Value& v : r.values) {
      line += "|";
      if (const auto* i = std::get_if<int64_t>(&v)) line += std::to_string(*i);
      if (const auto* b = std::get_if<bool>(&v)) line += *b ? "true" : "false";
      if (const auto* sv = std::get_if<std::string_view>(&v)) line += std::string(*sv);
      if (const auto* l = std::get_if<std::vector<std::string_view>>(&v)) {
        for (std::string_view x : *l) line += std::string(x) + ",";
      }
    }
    lines.push_back(line);
    return true;
  }
  std::vector<std::string> lines;
};

TEST(OpenXtraceRoundTrip, TreeLinksTimingsAndCallablesSurvive) {
  Pipeline first;
  build_log(first.tee);
  const std::string written = first.finish();
  ASSERT_EQ(first.keep.traces.size(), 2u);
  EXPECT_EQ(first.writer.stats().traces, 2u);
  EXPECT_EQ(first.writer.stats().sub_traces, 4u);
  EXPECT_EQ(first.writer.stats().callable_records_written, 3u);
  EXPECT_EQ(first.writer.stats().callable_records_dropped, 0u);

  // Valid by the meta-model's invariants (the helper thread outlives
  // nothing here, so no warnings either).
  std::istringstream check(written);
  const std::vector<format::OpenXtraceIssue> issues = format::validate_openxtrace(check);
  for (const auto& i : issues) ADD_FAILURE() << i.path << ": " << i.message;

  Pipeline second;
  CallableLines callables;
  Tee both(second.tee, callables);
  std::istringstream in(written);
  const format::LogReadStats read = format::read_openxtrace(in, "first.json", both);
  ASSERT_TRUE(read.ok) << read.errors.at(0);
  const std::string again = second.finish();
  ASSERT_EQ(second.keep.traces.size(), first.keep.traces.size());
  for (size_t i = 0; i < first.keep.traces.size(); ++i) {
    EXPECT_EQ(shape(second.keep.traces[i]), shape(first.keep.traces[i]));
  }
  const std::vector<std::string> expected_callables = {
      "sonde.record.DatabaseCall|1700000000123458289|100|1|2345|SELECT * FROM t WHERE id = "
      "?|true|||42,|SQLite|3|file:shop.db",
      "sonde.record.LogMessage|1700000000123461889|100|2|INFO|a done",
      "sonde.record.ExceptionThrow|1700000000123464566|100|3||std::runtime_error: out of "
      "stock|||true",
      "sonde.record.RemoteCall|1700000000123464789|100|4|12000|srv2|200",
      "sonde.record.HttpRequest|1700000000123464789|200|0|/cart/7|GET|200|Accept,*/"
      "*,|q,1,q,2,||||",
      "sonde.record.RemoteCall|1700000000123465889|200|2|100|srv2|300",
  };
  EXPECT_EQ(callables.lines, expected_callables);
  // Written again, the document is the same.
  EXPECT_EQ(Json::parse(again), Json::parse(written));
}

TEST(OpenXtraceRoundTrip, ShapeOfTheWrittenDocument) {
  Pipeline p;
  build_log(p.tee);
  const Json doc = Json::parse(p.finish());
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 2u);
  const Json& trace = doc[0];
  EXPECT_EQ(trace["traceId"], 100);
  const Json& sub = trace["rootOfTrace"];
  EXPECT_EQ(sub["host"], "srv1");
  EXPECT_EQ(sub["subTraceId"], 100);
  const Json& main = sub["rootOfSubTrace"];
  EXPECT_EQ(main["@class"], "org.spec.research.open.xtrace.api.core.callables.MethodInvocation");
  EXPECT_EQ(main["timeStamp"], 1'700'000'000'123);
  EXPECT_EQ(main["responseTime"], 30'000);
  EXPECT_EQ(main["additionalInformation.sonde.timestampNanos"], 1'700'000'000'123'456'789);
  EXPECT_EQ(main["threadID"], 11);
  ASSERT_EQ(main["children"].size(), 4u) << "a, the log message, b, the remote call";
  const Json& a = main["children"][0];
  EXPECT_EQ(a["methodName"], "a");
  EXPECT_EQ(a["className"], "Cart");
  EXPECT_EQ(a["packageName"], "shop");
  EXPECT_EQ(a["returnType"], "int");
  EXPECT_EQ(a["parameterTypes"], Json::array({"int", "java.lang.String"}));
  EXPECT_EQ(a["children"][0]["SQLStatement"], "SELECT * FROM t WHERE id = ?");
  EXPECT_EQ(a["children"][0]["parameterBindings"], Json({{"1", "42"}}));
  EXPECT_EQ(a["exclusiveTime"], 4'000 - 2'345);
  EXPECT_EQ(main["children"][1]["message"], "a done");
  const Json& b = main["children"][2];
  EXPECT_EQ(b["children"][0]["@class"],
            "org.spec.research.open.xtrace.api.core.callables.ExceptionThrow");
  EXPECT_EQ(b["children"][0]["errorMessage"], "std::runtime_error: out of stock");
  const Json& remote = main["children"][3];
  EXPECT_EQ(remote["target"], "srv2");
  const Json& server = remote["targetSubTrace"]["rootOfSubTrace"];
  EXPECT_EQ(server["@class"],
            "org.spec.research.open.xtrace.api.core.callables.HTTPRequestProcessing");
  EXPECT_EQ(server["uri"], "/cart/7");
  EXPECT_EQ(server["requestMethod"], "GET");
  EXPECT_EQ(server["HTTPParameters"], Json({{"q", {"1", "2"}}}));
  // The orphan keeps its link to the parent outside the file.
  const Json& orphan = doc[1]["rootOfTrace"]["rootOfSubTrace"];
  EXPECT_EQ(orphan["additionalInformation.sonde.parentTraceId"], 999);
  EXPECT_EQ(orphan["additionalInformation.sonde.component"], "ns::Tpl<int| char>");
}

// Every key the fork's JsonOPENxtraceDeserializer reads with get(...),
// which fails on a missing one.
void expect_fork_keys(const Json& node, const std::string& path) {
  auto need = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys) EXPECT_TRUE(node.contains(k)) << path << " lacks " << k;
  };
  const std::string cls = node.value("@class", "");
  const std::string simple = cls.substr(cls.rfind('.') + 1);
  if (simple == "Trace") need({"traceId", "rootOfTrace", "identifier"});
  if (simple == "SubTrace") {
    need({"rootOfSubTrace", "subTraceId", "identifier", "host", "port", "runtimeEnvironment",
          "application", "businessTransaction", "nodeType", "serverName"});
  }
  if (simple == "MethodInvocation" || simple == "HTTPRequestProcessing" ||
      simple == "DatabaseInvocation" || simple == "RemoteInvocation") {
    need({"timeStamp", "responseTime", "threadID", "threadName", "identifier", "labels"});
  }
  if (simple == "MethodInvocation") {
    need({"syncTime", "signature", "returnType", "returnValue", "parameterValues", "parameterTypes",
          "packageName", "methodName", "GCTime", "CPUTime", "className"});
  }
  if (simple == "HTTPRequestProcessing") {
    need({"uri", "responseHTTPHeaders", "responseCode", "requestMethod", "HTTPSessionAttributes",
          "HTTPParameters", "HTTPHeaders", "HTTPAttributes", "body"});
  }
  if (simple == "DatabaseInvocation") {
    need({"dbProductName", "dbProductVersion", "dbURL", "parameterBindings", "prepared",
          "SQLStatement"});
  }
  if (simple == "RemoteInvocation") need({"targetSubTrace", "target"});
}

TEST(OpenXtraceRoundTrip, EveryObjectHasTheKeysTheForkReads) {
  Pipeline p;
  build_log(p.tee);
  const Json doc = Json::parse(p.finish());
  std::vector<std::pair<const Json*, std::string>> todo = {{&doc, ""}};
  size_t objects = 0;
  while (!todo.empty()) {
    auto [node, path] = todo.back();
    todo.pop_back();
    if (node->is_object()) {
      if (node->contains("@class")) {
        ++objects;
        expect_fork_keys(*node, path);
      }
      for (const auto& [k, v] : node->items()) todo.push_back({&v, path + "/" + k});
    } else if (node->is_array()) {
      for (size_t i = 0; i < node->size(); ++i) {
        todo.push_back({&(*node)[i], path + "/" + std::to_string(i)});
      }
    }
  }
  EXPECT_EQ(objects, 2u + 4u + 7u + 5u) << "traces, sub-traces, executions, other callables";
}

TEST(OpenXtraceWriter, NoTracesIsAnEmptyArray) {
  std::ostringstream out;
  OpenXtraceWriter w(out);
  w.finish();
  EXPECT_EQ(out.str(), "[]\n");
}

TEST(CallableRecordBuffer, KeepsCallableRecordsPerTraceAndDropsTheOldestPastItsBound) {
  CallableRecordBuffer buffer(2);
  LogBuilder b(buffer);
  b.metadata(1, "h", 1);  // not a callable record: ignored
  b.log(1, 0, 10, "first");
  b.log(2, 0, 20, "second");
  b.log(2, 1, 30, "third");  // three pending: trace 1's go
  EXPECT_EQ(buffer.pending(), 2u);
  EXPECT_EQ(buffer.dropped(), 1u);
  EXPECT_TRUE(buffer.take(1).empty());
  const std::vector<OwnedRecord> two = buffer.take(2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].str(format::log_field::kMessage), "third");
  EXPECT_EQ(two[1].order_index(), 1);
  EXPECT_EQ(buffer.pending(), 0u);
}

TEST(OpenXtraceMethodNames, SplitsJavaAndSondeSignatures) {
  MethodNames java = method_names("public static void a.b.C.m(int, java.util.Map<K, V>)", "a.b.C");
  EXPECT_EQ(java.package_name, "a.b");
  EXPECT_EQ(java.class_name, "C");
  EXPECT_EQ(java.method_name, "m");
  EXPECT_EQ(java.return_type, "void");
  EXPECT_EQ(java.parameter_types, (std::vector<std::string>{"int", "java.util.Map<K, V>"}));
  MethodNames probe = method_names("shop.leaf", "shop");
  EXPECT_EQ(probe.package_name, "");
  EXPECT_EQ(probe.class_name, "shop");
  EXPECT_EQ(probe.method_name, "leaf");
  EXPECT_FALSE(probe.has_parameter_list);
}

}  // namespace
}  // namespace sonde::analysis
