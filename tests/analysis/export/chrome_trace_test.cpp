// Chrome Trace Event JSON: parsed back with nlohmann-json and checked
// against the Trace Event Format (required keys per phase), the input's
// times and nesting, flows between stitched parts, lanes for traces without
// thread ids, hostile names, and a real Kieker log end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/export/chrome_trace_writer.hpp"
#include "analysis/export/export_support.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "export/export_fixtures.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis {
namespace {

using nlohmann::json;
using test::exec;
using test::kT0;
using test::make_trace;

json write_chrome(const std::vector<StitchedTrace>& traces, ChromeTraceOptions options = {},
                  ChromeTraceStats* stats = nullptr) {
  std::ostringstream out;
  ChromeTraceWriter writer(out, options);
  for (const StitchedTrace& t : traces) writer.on_stitched_trace(t);
  writer.finish();
  if (stats) *stats = writer.stats();
  return json::parse(out.str());  // throws (fails the test) on malformed JSON
}

std::vector<json> events_with_phase(const json& doc, const std::string& phase) {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == phase) out.push_back(e);
  }
  return out;
}

// Nanoseconds back from the µs decimal, as a viewer reading a double would.
int64_t ns_of(const json& micros) { return std::llround(micros.get<double>() * 1000.0); }

// Required keys of each phase used, per the Trace Event Format.
void expect_well_formed_events(const json& doc) {
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc.contains("traceEvents"));
  ASSERT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  for (const json& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    const std::string ph = e["ph"];
    if (ph == "X") {
      EXPECT_TRUE(e["ts"].is_number()) << e;
      EXPECT_TRUE(e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
      EXPECT_TRUE(e["cat"].is_string()) << e;
      EXPECT_TRUE(e["args"].is_object()) << e;
    } else if (ph == "M") {
      EXPECT_TRUE(e["name"] == "process_name" || e["name"] == "thread_name") << e;
      EXPECT_TRUE(e["args"]["name"].is_string()) << e;
    } else if (ph == "s" || ph == "f") {
      EXPECT_TRUE(e["ts"].is_number()) << e;
      EXPECT_TRUE(e["id"].is_number_integer()) << e;
      EXPECT_TRUE(e["cat"].is_string()) << e;
      if (ph == "f") {
        EXPECT_EQ(e["bp"], "e") << e;
      }
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
}

// Per (pid, tid), in file order: starts never go back, and the X events
// are well nested: an event either lies inside the innermost open one or
// starts after it ended.
void expect_nesting_per_track(const json& doc) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> tracks;
  for (const json& e : events_with_phase(doc, "X")) {
    const int64_t start = ns_of(e["ts"]);
    tracks[{e["pid"], e["tid"]}].push_back({start, start + ns_of(e["dur"])});
  }
  for (auto& [track, spans] : tracks) {
    std::vector<std::pair<int64_t, int64_t>> open;
    int64_t previous_start = std::numeric_limits<int64_t>::min();
    for (const auto& [start, end] : spans) {
      EXPECT_GE(start, previous_start) << "events of a track out of order";
      previous_start = start;
      while (!open.empty() && !(open.back().first <= start && end <= open.back().second)) {
        EXPECT_LE(open.back().second, start)
            << "[" << start << "," << end << "] overlaps [" << open.back().first << ","
            << open.back().second << "]";
        open.pop_back();
      }
      open.push_back({start, end});
    }
  }
}

TEST(ChromeTrace, EveryExecutionIsOneCompleteEventWithExactTimes) {
  const Trace t = test::sample_trace();
  ChromeTraceOptions options;
  options.time_origin_ns = kT0 - 5'000;
  const json doc = write_chrome({one_part_stitched_trace(t)}, options);
  expect_well_formed_events(doc);
  const std::vector<json> xs = events_with_phase(doc, "X");
  ASSERT_EQ(xs.size(), t.executions.size());
  for (const json& x : xs) {
    const int32_t eoi = x["args"]["eoi"];
    const Execution& e = t.executions[static_cast<size_t>(eoi)];
    EXPECT_EQ(ns_of(x["ts"]), e.tin - *options.time_origin_ns);
    EXPECT_EQ(ns_of(x["dur"]), e.duration());
    EXPECT_EQ(x["args"]["ess"], e.ess);
    EXPECT_EQ(x["args"]["trace_id"], "10");
    EXPECT_EQ(x["args"]["operation"], std::string(e.operation));
    EXPECT_EQ(x["cat"], "sonde");
    EXPECT_EQ(x["args"].contains("failed"), e.failed);
  }
  EXPECT_EQ(doc["otherData"]["time_origin_ns"], std::to_string(kT0 - 5'000));
  expect_nesting_per_track(doc);
}

TEST(ChromeTrace, TimestampsAreDecimalMicrosecondsWithNanosecondDigits) {
  ChromeTraceOptions options;
  options.time_origin_ns = kT0 - 1'000'000'001;  // ts = 1000000.001 µs
  std::ostringstream out;
  ChromeTraceWriter writer(out, options);
  writer.on_stitched_trace(
      one_part_stitched_trace(make_trace(1, 1, {exec("f()", "C", kT0, kT0 + 1'234'567, 0, 0)})));
  writer.finish();
  EXPECT_NE(out.str().find("\"ts\":1000000.001,\"dur\":1234.567"), std::string::npos) << out.str();
}

TEST(ChromeTrace, DefaultOriginIsAnHourBeforeTheFirstTraceSoLaterTracesStayPositive) {
  const Trace t = test::sample_trace();
  std::ostringstream out;
  ChromeTraceWriter writer(out);
  writer.on_stitched_trace(one_part_stitched_trace(t));
  // A trace that started 30 minutes earlier but completed later.
  writer.on_stitched_trace(one_part_stitched_trace(
      make_trace(2, 7, {exec("early()", "C", kT0 - 1'800'000'000'000, kT0 + 2'000, 0, 0)})));
  writer.finish();
  const int64_t origin = writer.time_origin_ns();
  constexpr int64_t kHour = 3'600'000'000'000;
  EXPECT_EQ(origin % kHour, 0);
  EXPECT_LE(origin, kT0 - kHour);
  EXPECT_GT(origin, kT0 - 2 * kHour);
  const json doc = json::parse(out.str());
  for (const json& x : events_with_phase(doc, "X")) EXPECT_GE(x["ts"].get<double>(), 0) << x;
}

TEST(ChromeTrace, EqualTimestampsStillNestCallerFirst) {
  // Operations in Kieker's form, whose short labels keep the class.
  // outer, middle and inner all start at the same ns; middle and inner also
  // end together; zero() takes no time and is followed at once by next().
  const Trace t = make_trace(
      1, 1,
      {exec("C.outer()", "C", kT0, kT0 + 100, 0, 0), exec("C.middle()", "C", kT0, kT0 + 50, 1, 1),
       exec("C.inner()", "C", kT0, kT0 + 50, 2, 2), exec("C.zero()", "C", kT0 + 50, kT0 + 50, 3, 1),
       exec("C.next()", "C", kT0 + 50, kT0 + 80, 4, 1)});
  const json doc = write_chrome({one_part_stitched_trace(t)});
  const std::vector<json> xs = events_with_phase(doc, "X");
  ASSERT_EQ(xs.size(), 5u);
  EXPECT_EQ(xs[0]["name"], "C.outer()");
  EXPECT_EQ(xs[1]["name"], "C.middle()");
  EXPECT_EQ(xs[2]["name"], "C.inner()");
  EXPECT_EQ(xs[3]["name"], "C.zero()");
  EXPECT_EQ(xs[4]["name"], "C.next()");
  expect_nesting_per_track(doc);
}

TEST(ChromeTrace, CalleesOutsideTheirCallerAreClampedIntoIt) {
  // Clock skew: the callee appears to end after its caller.
  const Trace t = make_trace(
      1, 1,
      {exec("outer()", "C", kT0, kT0 + 100, 0, 0), exec("late()", "C", kT0 + 90, kT0 + 150, 1, 1)});
  ChromeTraceStats stats;
  const json doc = write_chrome({one_part_stitched_trace(t)}, {}, &stats);
  EXPECT_EQ(stats.clamped, 1u);
  const std::vector<json> xs = events_with_phase(doc, "X");
  ASSERT_EQ(xs.size(), 2u);
  EXPECT_EQ(xs[1]["args"]["clamped"], true);
  EXPECT_EQ(ns_of(xs[1]["dur"]), 10);
  expect_nesting_per_track(doc);
}

TEST(ChromeTrace, ProcessesPerHostThreadsPerThreadWithNames) {
  const StitchedTrace s = test::stitched_sample();
  ChromeTraceStats stats;
  const json doc = write_chrome({s}, {}, &stats);
  expect_well_formed_events(doc);
  EXPECT_EQ(stats.processes, 2u);  // h1, h2
  EXPECT_EQ(stats.threads, 3u);    // h1/7, h1/8, h2/3
  std::map<int64_t, std::string> process_names;
  std::map<int64_t, std::string> thread_names;
  for (const json& m : events_with_phase(doc, "M")) {
    auto& names = m["name"] == "process_name" ? process_names : thread_names;
    const int64_t key =
        m["name"] == "process_name" ? m["pid"].get<int64_t>() : m["tid"].get<int64_t>();
    EXPECT_TRUE(names.emplace(key, m["args"]["name"]).second) << "named twice: " << m;
  }
  EXPECT_EQ(process_names.size(), 2u);
  EXPECT_EQ(thread_names.size(), 3u);
  std::set<std::string> names;
  for (const auto& [tid, name] : thread_names) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"thread 7", "thread 8", "thread 3"}));
  // tids never collide with pids (a viewer would take such a thread for a main thread).
  for (const auto& [tid, name] : thread_names) EXPECT_EQ(process_names.count(tid), 0u);
  // Every X event sits on a named process and thread.
  for (const json& x : events_with_phase(doc, "X")) {
    EXPECT_EQ(process_names.count(x["pid"]), 1u);
    EXPECT_EQ(thread_names.count(x["tid"]), 1u);
  }
  EXPECT_EQ(events_with_phase(doc, "X").size(), test::execution_count(s));
  expect_nesting_per_track(doc);
}

TEST(ChromeTrace, FlowsLinkEachContinuedPartToItsParentExecution) {
  const StitchedTrace s = test::stitched_sample();
  ChromeTraceStats stats;
  const json doc = write_chrome({s}, {}, &stats);
  EXPECT_EQ(stats.flows, 2u);
  const std::vector<json> starts = events_with_phase(doc, "s");
  const std::vector<json> ends = events_with_phase(doc, "f");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_NE(starts[0]["id"], starts[1]["id"]);

  // The flow's binding slice = the innermost X event on its track at its ts.
  const auto innermost = [&](const json& flow) {
    json best;
    for (const json& x : events_with_phase(doc, "X")) {
      if (x["pid"] != flow["pid"] || x["tid"] != flow["tid"]) continue;
      const double ts = flow["ts"];
      const double start = x["ts"];
      const double end = start + x["dur"].get<double>();
      if (start <= ts && ts <= end && (best.is_null() || start >= best["ts"].get<double>()))
        best = x;
    }
    return best;
  };
  // part 1 from Svc.submit (eoi 3 of trace 10); part 2 from Worker.step (eoi 1 of trace 11).
  const std::map<std::string, std::string> expected = {{"11", "10"}, {"12", "11"}};
  for (size_t i = 0; i < 2; ++i) {
    const json& s_event = starts[i];
    const json* f_event = nullptr;
    for (const json& f : ends) {
      if (f["id"] == s_event["id"]) f_event = &f;
    }
    ASSERT_NE(f_event, nullptr);
    EXPECT_EQ(s_event["cat"], (*f_event)["cat"]);
    // Viewers read flows in time order: the start must not come after the end.
    EXPECT_LE(ns_of(s_event["ts"]), ns_of((*f_event)["ts"]));
    EXPECT_EQ(s_event["name"], (*f_event)["name"]);
    const json from = innermost(s_event);
    const json to = innermost(*f_event);
    ASSERT_FALSE(from.is_null());
    ASSERT_FALSE(to.is_null());
    EXPECT_EQ(to["args"]["eoi"], 0);
    const std::string child = to["args"]["trace_id"];
    ASSERT_EQ(expected.count(child), 1u) << child;
    EXPECT_EQ(from["args"]["trace_id"], expected.at(child));
  }
  // Svc.submit's flow start is not inside its callee Dao.query on the same thread.
  for (const json& st : starts) {
    const json from = innermost(st);
    if (from["args"]["trace_id"] == "10") {
      EXPECT_EQ(from["args"]["eoi"], 3);
    }
    if (from["args"]["trace_id"] == "11") {
      EXPECT_EQ(from["args"]["eoi"], 1);
    }
  }
}

TEST(ChromeTrace, FlowsCanBeLeftOut) {
  ChromeTraceOptions options;
  options.flows = false;
  const json doc = write_chrome({test::stitched_sample()}, options);
  EXPECT_TRUE(events_with_phase(doc, "s").empty());
  EXPECT_TRUE(events_with_phase(doc, "f").empty());
  EXPECT_EQ(events_with_phase(doc, "X").size(), test::execution_count(test::stitched_sample()));
}

TEST(ChromeTrace, TracesWithoutThreadIdGetLanesSoConcurrentTracesNeverShareATrack) {
  // Traces 1 and 2 overlap; trace 3 starts after both ended.
  const std::vector<StitchedTrace> traces = {
      one_part_stitched_trace(make_trace(1, -1, {exec("a()", "C", kT0, kT0 + 100, 0, 0)})),
      one_part_stitched_trace(make_trace(2, -1, {exec("b()", "C", kT0 + 50, kT0 + 150, 0, 0)})),
      one_part_stitched_trace(make_trace(3, -1, {exec("c()", "C", kT0 + 200, kT0 + 300, 0, 0)}))};
  const json doc = write_chrome(traces);
  const std::vector<json> xs = events_with_phase(doc, "X");
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_NE(xs[0]["tid"], xs[1]["tid"]);
  EXPECT_EQ(xs[0]["tid"], xs[2]["tid"]);
  expect_nesting_per_track(doc);
}

TEST(ChromeTrace, FailedExecutionsCarryTheirCause) {
  const json doc = write_chrome({one_part_stitched_trace(test::sample_trace())});
  int failed = 0;
  for (const json& x : events_with_phase(doc, "X")) {
    if (x["args"].contains("failed")) {
      ++failed;
      EXPECT_EQ(x["args"]["failed"], true);
      EXPECT_EQ(x["args"]["cause"], "java.io.IOException: disk");
      EXPECT_EQ(x["args"]["eoi"], 4);
    }
  }
  EXPECT_EQ(failed, 1);
}

TEST(ChromeTrace, HostileNamesStayValidJson) {
  const std::string evil = "q\"uote\\back\nline\ttab\x01 </script><b>&amp; ;semi \xff\xfe bad";
  Execution e = exec(evil, evil, kT0, kT0 + 10, 0, 0, evil);
  e.failed = true;
  e.cause = evil;
  Trace t = make_trace(1, 1, {e}, evil);
  t.session = evil;
  ChromeTraceOptions options;
  options.short_labels = false;
  const json doc = write_chrome({one_part_stitched_trace(t)}, options);
  expect_well_formed_events(doc);
  const std::vector<json> xs = events_with_phase(doc, "X");
  ASSERT_EQ(xs.size(), 1u);
  // Valid UTF-8 round-trips; the two invalid bytes became U+FFFD each.
  const std::string expected =
      "q\"uote\\back\nline\ttab\x01 </script><b>&amp; ;semi \xEF\xBF\xBD\xEF\xBF\xBD bad";
  EXPECT_EQ(xs[0]["name"], expected);
  EXPECT_EQ(xs[0]["args"]["cause"], expected);
  EXPECT_EQ(xs[0]["args"]["session"], expected);
  for (const json& m : events_with_phase(doc, "M")) {
    if (m["name"] == "process_name") {
      EXPECT_EQ(m["args"]["name"], expected);
    }
  }
}

TEST(ChromeTrace, NoTracesStillGivesAValidDocument) {
  const json doc = write_chrome({});
  expect_well_formed_events(doc);
  EXPECT_TRUE(doc["traceEvents"].empty());
}

TEST(ChromeTrace, KiekerBookstoreLogEndToEnd) {
  const std::string log = std::string(SONDE_TESTDATA_DIR) + "/kieker/bookstore-oer-2010/log";
  std::ostringstream out;
  ChromeTraceWriter writer(out);
  OnePartStitchedTraceSink one_part(writer);
  AnalysisOptions options;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  TraceAnalysis analysis(options);
  analysis.add_sink(one_part);
  const format::LogReadStats read = format::read_log(log, analysis.records());
  const AnalysisResult result = analysis.finish();
  writer.finish();
  ASSERT_TRUE(read.ok);
  ASSERT_GT(result.traces.valid, 0u);

  const json doc = json::parse(out.str());
  expect_well_formed_events(doc);
  EXPECT_EQ(events_with_phase(doc, "X").size(), result.traces.executions);
  EXPECT_EQ(writer.stats().traces, result.traces.valid);
  EXPECT_EQ(writer.stats().clamped, 0u);
  EXPECT_TRUE(events_with_phase(doc, "s").empty());  // one-part traces: no flows
  expect_nesting_per_track(doc);
}

}  // namespace
}  // namespace sonde::analysis
