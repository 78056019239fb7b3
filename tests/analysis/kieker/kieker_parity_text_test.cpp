// Kieker's text outputs: execution traces, message traces and trace
// equivalence classes, against the files Kieker's trace-analysis wrote for
// the same logs. Expected text comes from those golden files only.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <tuple>

#include "analysis/kieker/execution_trace_text.hpp"
#include "analysis/kieker/system_model_html.hpp"
#include "analysis/kieker/trace_equivalence.hpp"
#include "analysis/model/message_trace.hpp"
#include "analysis/model/trace_start_order.hpp"
#include "kieker/kieker_parity_support.hpp"

namespace sonde::analysis {
namespace {

using namespace parity;

// The traces Kieker printed: "TraceId 6488138950668976129 (minTin=...".
std::unordered_set<int64_t> golden_execution_trace_ids(const std::string& text) {
  static const std::regex re(R"(^TraceId (\d+) )");
  std::unordered_set<int64_t> ids;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_search(line, m, re)) ids.insert(std::stoll(m[1]));
  }
  return ids;
}

TEST(KiekerParityText, BookstoreExecutionAndMessageTracesAreKiekersBytes) {
  const std::string golden_exec =
      read_file(golden_dir("bookstore-oer-2010") / "executionTraces.txt");
  const std::string golden_msg = read_file(golden_dir("bookstore-oer-2010") / "messageTraces.txt");
  const std::unordered_set<int64_t> ids = golden_execution_trace_ids(golden_exec);
  ASSERT_EQ(ids.size(), 4u);  // the four traces of HOW-GENERATED.txt's third call
  KiekerOutputOptions o;
  o.execution_traces = true;
  o.message_traces = true;
  o.short_labels = true;
  const ParityRun run = run_parity("bookstore-oer-2010", o, ids);
  ASSERT_TRUE(run.read.ok);
  EXPECT_EQ(run.traces, ids.size());
  EXPECT_EQ(run.files.at("executionTraces.txt"), golden_exec);
  EXPECT_EQ(run.files.at("messageTraces.txt"), golden_msg);
}

using ClassLine = std::tuple<uint64_t, uint64_t, int64_t, int>;  // card, execs, rep, depth

std::multiset<ClassLine> parse_classes(const std::string& text, size_t* lines) {
  static const std::regex re(
      R"(^Class (\d+) ; cardinality: (\d+); # executions: (\d+); representative: (-?\d+); )"
      R"(max\. stack depth: (-?\d+)$)");
  std::multiset<ClassLine> classes;
  size_t n = 0;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, re)) << line;
    if (!std::regex_match(line, m, re)) continue;
    EXPECT_EQ(std::stoul(m[1]), n) << "classes are numbered from 0";
    ++n;
    classes.insert({std::stoull(m[2]), std::stoull(m[3]), std::stoll(m[4]), std::stoi(m[5])});
  }
  *lines = n;
  return classes;
}

TEST(KiekerParityText, BookstoreEquivalenceClassesMatchKiekers) {
  KiekerOutputOptions o;
  o.deployment_equivalence_classes = true;
  o.assembly_equivalence_classes = true;
  const ParityRun run = run_parity("bookstore-oer-2010", o);
  for (const char* file : {"traceDeploymentEquivClasses.txt", "traceAssemblyEquivClasses.txt"}) {
    size_t golden_count = 0;
    size_t our_count = 0;
    const auto golden =
        parse_classes(read_file(golden_dir("bookstore-oer-2010") / file), &golden_count);
    const auto ours = parse_classes(run.files.at(file), &our_count);
    ASSERT_GT(golden_count, 0u) << file;
    EXPECT_EQ(our_count, golden_count) << file;
    // Kieker numbers classes in its hash map's order; the classes themselves
    // (cardinality, size, representative, depth) must be the same.
    EXPECT_EQ(ours, golden) << file;
  }
  // With one class there is no order to differ in: the bytes are Kieker's.
  EXPECT_EQ(run.files.at("traceAssemblyEquivClasses.txt"),
            read_file(golden_dir("bookstore-oer-2010") / "traceAssemblyEquivClasses.txt"));
}

Trace make_trace(int64_t id, std::vector<std::pair<std::string_view, int32_t>> calls,
                 std::string_view host = "h", int64_t t0 = 1000) {
  Trace t;
  t.trace_id = id;
  t.origin = TraceOrigin::kExecutionRecords;
  t.session = "s";
  int64_t tin = t0;
  for (size_t i = 0; i < calls.size(); ++i) {
    Execution e;
    e.operation = calls[i].first;
    e.component = "p.C";
    e.host = host;
    e.eoi = static_cast<int32_t>(i);
    e.ess = calls[i].second;
    e.tin = tin++;
    t.executions.push_back(e);
  }
  // Each execution ends after everything nested in it.
  int64_t tout = tin + 100;
  for (size_t i = calls.size(); i-- > 0;) t.executions[i].tout = tout--;
  return t;
}

TEST(KiekerParityText, MessagesFollowKiekersCallAndReplyOrder) {
  const Trace t = make_trace(
      7, {{"p.C.a()", 0}, {"p.C.b()", 1}, {"p.C.c()", 2}, {"p.C.d()", 1}, {"p.C.e()", 0}});
  const std::vector<TraceMessage> m = message_sequence(t);
  const std::vector<std::tuple<bool, int32_t, int32_t>> expected = {
      {true, -1, 0}, {true, 0, 1},  {true, 1, 2},   {false, 2, 1}, {false, 1, 0},
      {true, 0, 3},  {false, 3, 0}, {false, 0, -1}, {true, -1, 4}, {false, 4, -1}};
  ASSERT_EQ(m.size(), expected.size());
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(std::make_tuple(m[i].call, m[i].sender, m[i].receiver), expected[i]) << i;
    const Execution& callee =
        t.executions[static_cast<size_t>(m[i].call ? m[i].receiver : m[i].sender)];
    EXPECT_EQ(m[i].timestamp, m[i].call ? callee.tin : callee.tout) << i;
  }
}

TEST(KiekerParityText, EquivalenceIgnoresTimesAndSeparatesHostsOnTheDeploymentLevel) {
  KiekerSystemModel model;
  TraceEquivalenceClasses deployment(AggregationLevel::kDeployment);
  TraceEquivalenceClasses assembly(AggregationLevel::kAssembly);
  const std::vector<Trace> traces = {
      make_trace(1, {{"p.C.a()", 0}, {"p.C.b()", 1}}, "h1", 100),
      make_trace(2, {{"p.C.a()", 0}, {"p.C.b()", 1}}, "h1", 900),
      make_trace(3, {{"p.C.a()", 0}, {"p.C.b()", 1}}, "h2", 50),
      make_trace(4, {{"p.C.a()", 0}, {"p.C.b()", 0}}, "h1", 70),
  };
  for (const Trace& t : traces) {
    const KiekerTrace k = resolve_kieker_trace(t, model);
    deployment.add(k);
    assembly.add(k);
  }
  ASSERT_EQ(deployment.classes().size(), 3u);
  EXPECT_EQ(deployment.classes()[0].representative, 1);  // the first of its class
  EXPECT_EQ(deployment.classes()[0].cardinality, 2u);
  ASSERT_EQ(assembly.classes().size(), 2u);
  EXPECT_EQ(assembly.classes()[0].cardinality, 3u);
  EXPECT_EQ(assembly.classes()[1].max_ess, 0);
  EXPECT_EQ(equivalence_classes_text(assembly),
            "Class 0 ; cardinality: 3; # executions: 2; representative: 1; max. stack depth: 1\n"
            "Class 1 ; cardinality: 1; # executions: 2; representative: 4; max. stack depth: 0\n");
}

struct IdRecorder : TraceSink {
  std::vector<int64_t> ids;
  void on_trace(const Trace& t) override { ids.push_back(t.trace_id); }
  void on_invalid_trace(const InvalidTrace& t) override { ids.push_back(-t.trace_id); }
};

TEST(KiekerParityText, ExecutionRecordTracesAreReleasedInKiekersStartOrder) {
  IdRecorder seen;
  TraceStartOrder order(seen, 3);
  // Arrival (= end) order 2, 1, 4, 3; start order 1, 2, 3, 4; ties by id.
  order.on_trace(make_trace(2, {{"p.C.a()", 0}}, "h", 20));
  order.on_trace(make_trace(1, {{"p.C.a()", 0}}, "h", 10));
  Trace flow = make_trace(9, {{"p.C.a()", 0}}, "h", 0);
  flow.origin = TraceOrigin::kFlowEvents;
  order.on_trace(flow);  // passes straight through
  order.on_trace(make_trace(4, {{"p.C.a()", 0}}, "h", 30));
  EXPECT_EQ(seen.ids, (std::vector<int64_t>{9}));
  order.on_trace(make_trace(3, {{"p.C.a()", 0}}, "h", 30));  // window full: 1 goes
  EXPECT_EQ(seen.ids, (std::vector<int64_t>{9, 1}));
  order.on_trace(make_trace(5, {{"p.C.a()", 0}}, "h", 40));
  order.on_trace(make_trace(0, {{"p.C.a()", 0}}, "h", 5));  // too late for its place
  order.flush();
  EXPECT_EQ(seen.ids, (std::vector<int64_t>{9, 1, 2, 0, 3, 4, 5}));
  EXPECT_EQ(order.late(), 1u);

  // Memory is bounded by executions held, too.
  IdRecorder few;
  TraceStartOrder small(few, 100, 3);
  small.on_trace(make_trace(1, {{"p.C.a()", 0}, {"p.C.b()", 1}}, "h", 10));
  small.on_trace(make_trace(2, {{"p.C.a()", 0}, {"p.C.b()", 1}}, "h", 20));
  EXPECT_EQ(few.ids, (std::vector<int64_t>{1}));
}

TEST(KiekerParityText, InvalidExecutionRecordTracesArePrintedAsKiekerArtifacts) {
  KiekerOutputOptions o;
  o.invalid_traces = true;
  MemoryFiles files;
  KiekerSystemModel model;
  KiekerTraceAnalysis outputs(o, model, files);
  InvalidTrace broken;
  broken.trace_id = 5;
  broken.problems.push_back({TraceProblemKind::kEoiGap, "eoi 1 missing"});
  broken.partial = make_trace(5, {{"p.C.a()", 0}, {"p.C.b()", 2}});
  broken.partial.executions[1].eoi = 2;
  outputs.on_invalid_trace(broken);
  InvalidTrace flow = broken;
  flow.partial.origin = TraceOrigin::kFlowEvents;
  outputs.on_invalid_trace(flow);  // Kieker prints no artifacts for these
  outputs.finish();
  EXPECT_EQ(outputs.invalid_traces(), 2u);
  const std::vector<std::string> lines = lines_of(files.files.at("invalidTraceArtifacts.txt"));
  ASSERT_EQ(lines.size(), 4u);  // header, two executions, blank line
  EXPECT_TRUE(lines[0].starts_with("TraceId 5 (minTin=1000 (Thu, 1 Jan 1970")) << lines[0];
  EXPECT_TRUE(lines[0].ends_with("; maxEss=2):")) << lines[0];
  EXPECT_EQ(lines[2], "<5[2,2] 1001-1102 h::@1:p.C.b s>");
}

TEST(KiekerParityText, SystemModelHtmlIsKiekersBytes) {
  KiekerOutputOptions o;
  o.system_model = true;
  for (const char* log : {"bookstore-oer-2010", "events-2014"}) {
    const std::string golden = read_file(golden_dir(log) / "system-entities.html");
    ASSERT_FALSE(golden.empty()) << log;
    EXPECT_EQ(run_parity(log, o).files.at("system-entities.html"), golden) << log;
  }
  // Kieker's last bookstore run selected four traces; they reach every entity.
  const std::string golden = read_file(golden_dir("bookstore-oer-2010") / "executionTraces.txt");
  EXPECT_EQ(run_parity("bookstore-oer-2010", o, golden_execution_trace_ids(golden))
                .files.at("system-entities.html"),
            read_file(golden_dir("bookstore-oer-2010") / "system-entities.html"));
}

TEST(KiekerParityText, SignaturesParseAsKiekerParsesThem) {
  KiekerSignature s = parse_kieker_signature(
      "private static void a.b.C.spawn(a.b.Bookstore, java.util.concurrent.CountDownLatch)");
  EXPECT_EQ(s.modifiers, (std::vector<std::string>{"private", "static"}));
  EXPECT_EQ(s.return_type, "void");
  EXPECT_EQ(s.name, "spawn");
  EXPECT_EQ(s.parameters,
            (std::vector<std::string>{"a.b.Bookstore", "java.util.concurrent.CountDownLatch"}));
  EXPECT_EQ(kieker_signature_text(s),
            "private static spawn(a.b.Bookstore,java.util.concurrent.CountDownLatch):void");
  s = parse_kieker_signature("bookstoreTracing.Catalog.getBook(boolean)");
  EXPECT_TRUE(s.modifiers.empty());
  EXPECT_EQ(s.return_type, "");  // printed as <NO-RETURN-TYPE>
  EXPECT_EQ(kieker_signature_text(s), "getBook(boolean)");
  s = parse_kieker_signature("public a.B.<init>()");
  EXPECT_EQ(s.return_type, "");
  EXPECT_EQ(s.modifiers, (std::vector<std::string>{"public"}));
  EXPECT_EQ(s.name, "<init>");
}

TEST(KiekerParityText, DatesAreJavasUtcFormat) {
  EXPECT_EQ(kieker_utc_date(0), "Thu, 1 Jan 1970 00:00:00.000 +0000 (UTC)");
  // Java truncates to milliseconds first, then the calendar floors.
  EXPECT_EQ(kieker_utc_date(-999'999), "Thu, 1 Jan 1970 00:00:00.000 +0000 (UTC)");
  EXPECT_EQ(kieker_utc_date(-1'000'000), "Wed, 31 Dec 1969 23:59:59.999 +0000 (UTC)");
  EXPECT_EQ(kieker_utc_date(951'782'400'123'456'789), "Tue, 29 Feb 2000 00:00:00.123 +0000 (UTC)");
}

}  // namespace
}  // namespace sonde::analysis
