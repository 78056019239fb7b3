// OTLP/JSON Lines: every line parsed back as an ExportTraceServiceRequest
// (protobuf JSON mapping: hex ids, integer enums, 64-bit integers as
// strings); one span per execution; parent links inside a part and across
// stitched parts; ids consistent with sonde's W3C traceparent; failures as
// status ERROR; batching; a real Kieker log end to end.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/export/export_support.hpp"
#include "analysis/export/otlp_json_writer.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "export/export_fixtures.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis {
namespace {

using nlohmann::json;
using test::exec;
using test::kT0;
using test::make_trace;

struct Span {
  json span;
  json resource;  // the ResourceSpans' resource
};

std::vector<json> write_lines(const std::vector<StitchedTrace>& traces,
                              OtlpJsonOptions options = {}, OtlpJsonStats* stats = nullptr) {
  std::ostringstream out;
  OtlpJsonWriter writer(out, options);
  for (const StitchedTrace& t : traces) writer.on_stitched_trace(t);
  writer.finish();
  if (stats) *stats = writer.stats();
  std::vector<json> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

std::vector<Span> spans_of(const std::vector<json>& lines) {
  std::vector<Span> out;
  for (const json& line : lines) {
    for (const json& rs : line["resourceSpans"]) {
      for (const json& ss : rs["scopeSpans"]) {
        for (const json& s : ss["spans"]) out.push_back(Span{s, rs["resource"]});
      }
    }
  }
  return out;
}

// The value of attribute `key` (an AnyValue object), null if absent.
json attribute(const json& attributes, const std::string& key) {
  for (const json& a : attributes) {
    if (a["key"] == key) return a["value"];
  }
  return nullptr;
}

bool is_hex(const json& v, size_t length) {
  if (!v.is_string()) return false;
  const std::string s = v;
  return s.size() == length && std::regex_match(s, std::regex("[0-9a-f]+")) &&
         s != std::string(length, '0');
}

// What sonde_context_inject (src/monitor/context.cpp) writes for a context.
std::string traceparent(int64_t trace_id, int32_t order_index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "00-%016llx%016llx-%016llx-01", 0ULL,
                static_cast<unsigned long long>(trace_id),
                static_cast<unsigned long long>(static_cast<int64_t>(order_index) + 1));
  return buf;
}

void expect_request_shape(const json& line) {
  ASSERT_TRUE(line.is_object());
  ASSERT_TRUE(line["resourceSpans"].is_array());
  for (const json& rs : line["resourceSpans"]) {
    ASSERT_TRUE(rs["resource"]["attributes"].is_array());
    for (const json& a : rs["resource"]["attributes"]) {
      EXPECT_TRUE(a["key"].is_string());
      EXPECT_TRUE(a["value"]["stringValue"].is_string());
    }
    ASSERT_TRUE(rs["scopeSpans"].is_array());
    for (const json& ss : rs["scopeSpans"]) {
      EXPECT_EQ(ss["scope"]["name"], "sonde");
      for (const json& s : ss["spans"]) {
        EXPECT_TRUE(is_hex(s["traceId"], 32)) << s;
        EXPECT_TRUE(is_hex(s["spanId"], 16)) << s;
        if (s.contains("parentSpanId")) {
          EXPECT_TRUE(is_hex(s["parentSpanId"], 16)) << s;
        }
        EXPECT_TRUE(s["name"].is_string());
        EXPECT_TRUE(s["kind"].is_number_integer());
        ASSERT_TRUE(s["startTimeUnixNano"].is_string());
        ASSERT_TRUE(s["endTimeUnixNano"].is_string());
        EXPECT_LE(std::stoll(s["startTimeUnixNano"].get<std::string>()),
                  std::stoll(s["endTimeUnixNano"].get<std::string>()));
        for (const json& a : s["attributes"]) {
          ASSERT_TRUE(a["key"].is_string());
          const json& v = a["value"];
          ASSERT_EQ(v.size(), 1u) << a;
          if (v.contains("intValue")) {
            ASSERT_TRUE(v["intValue"].is_string()) << "int64 must be a JSON string: " << a;
          } else {
            EXPECT_TRUE(v.contains("stringValue") || v.contains("boolValue")) << a;
          }
        }
      }
    }
  }
}

TEST(OtlpJson, OneSpanPerExecutionWithExactTimesAndParents) {
  const Trace t = test::sample_trace();
  OtlpJsonStats stats;
  const std::vector<json> lines = write_lines({one_part_stitched_trace(t)}, {}, &stats);
  ASSERT_EQ(lines.size(), 1u);
  expect_request_shape(lines[0]);
  const std::vector<Span> spans = spans_of(lines);
  ASSERT_EQ(spans.size(), t.executions.size());
  EXPECT_EQ(stats.spans, t.executions.size());

  std::map<std::string, json> by_id;
  for (const Span& s : spans) by_id[s.span["spanId"]] = s.span;
  EXPECT_EQ(by_id.size(), spans.size()) << "span ids not unique";
  // eoi -> parent eoi: main{handle{query} submit{query}}
  const std::map<int, int> parent_of = {{1, 0}, {2, 1}, {3, 0}, {4, 3}};
  for (const Span& s : spans) {
    const json& span = s.span;
    const int eoi =
        std::stoi(attribute(span["attributes"], "sonde.eoi")["intValue"].get<std::string>());
    const Execution& e = t.executions[static_cast<size_t>(eoi)];
    EXPECT_EQ(span["traceId"], "0000000000000000000000000000000a");
    EXPECT_EQ(span["spanId"], hex16(static_cast<uint64_t>(eoi) + 1));
    EXPECT_EQ(span["startTimeUnixNano"], std::to_string(e.tin));
    EXPECT_EQ(span["endTimeUnixNano"], std::to_string(e.tout));
    EXPECT_EQ(span["kind"], 1);  // INTERNAL
    EXPECT_EQ(attribute(span["attributes"], "sonde.operation")["stringValue"],
              std::string(e.operation));
    EXPECT_EQ(attribute(span["attributes"], "thread.id")["intValue"], "7");
    if (eoi == 0) {
      EXPECT_FALSE(span.contains("parentSpanId"));
    } else {
      EXPECT_EQ(span["parentSpanId"], hex16(static_cast<uint64_t>(parent_of.at(eoi)) + 1));
    }
  }
  EXPECT_EQ(attribute(by_id["0000000000000002"]["attributes"], "code.function.name")["stringValue"],
            "a.Svc.handle");
  EXPECT_EQ(by_id["0000000000000002"]["name"], "Svc.handle(..)");
}

TEST(OtlpJson, ResourcePerHostWithServiceAndHostName) {
  const std::vector<json> lines = write_lines({test::stitched_sample()});
  ASSERT_EQ(lines.size(), 1u);
  expect_request_shape(lines[0]);
  const json& rs = lines[0]["resourceSpans"];
  ASSERT_EQ(rs.size(), 2u);
  std::set<std::string> hosts;
  for (const json& r : rs) {
    const json host = attribute(r["resource"]["attributes"], "host.name");
    hosts.insert(host["stringValue"].get<std::string>());
    EXPECT_EQ(attribute(r["resource"]["attributes"], "service.name"), host);
  }
  EXPECT_EQ(hosts, (std::set<std::string>{"h1", "h2"}));

  OtlpJsonOptions options;
  options.service_name = "bookstore";
  options.scope_version = "0.1.0";
  const std::vector<json> named = write_lines({test::stitched_sample()}, options);
  for (const json& r : named[0]["resourceSpans"]) {
    EXPECT_EQ(attribute(r["resource"]["attributes"], "service.name")["stringValue"], "bookstore");
    EXPECT_EQ(r["scopeSpans"][0]["scope"]["version"], "0.1.0");
  }
}

TEST(OtlpJson, StitchedPartsShareTheTraceIdAndHangUnderTheirParentExecution) {
  const StitchedTrace s = test::stitched_sample();
  const std::vector<Span> spans = spans_of(write_lines({s}));
  ASSERT_EQ(spans.size(), test::execution_count(s));
  std::map<std::pair<std::string, int>, json> by_part;  // (sonde trace id, eoi)
  std::set<std::string> ids;
  for (const Span& sp : spans) {
    EXPECT_EQ(sp.span["traceId"], otlp_trace_id(10));
    const json& a = sp.span["attributes"];
    by_part[{attribute(a, "sonde.trace_id")["intValue"],
             std::stoi(attribute(a, "sonde.eoi")["intValue"].get<std::string>())}] = sp.span;
    EXPECT_TRUE(ids.insert(sp.span["spanId"]).second) << "duplicate span id " << sp.span;
  }
  const auto span_at = [&](const std::string& trace, int eoi) { return by_part[{trace, eoi}]; };
  // The worker's root hangs under Svc.submit (eoi 3 of trace 10); the remote
  // part under Worker.step (eoi 1 of trace 11).
  EXPECT_EQ(span_at("11", 0)["parentSpanId"], span_at("10", 3)["spanId"]);
  EXPECT_EQ(span_at("11", 1)["parentSpanId"], span_at("11", 0)["spanId"]);
  EXPECT_EQ(span_at("12", 0)["parentSpanId"], span_at("11", 1)["spanId"]);
  // Parts other than the owner's get hashed ids with the top bit set.
  EXPECT_EQ(span_at("10", 3)["spanId"], "0000000000000004");
  EXPECT_GE(std::stoull(span_at("11", 0)["spanId"].get<std::string>(), nullptr, 16),
            uint64_t{1} << 63);
  // Another thread on the same host: INTERNAL; another host: CLIENT -> SERVER.
  EXPECT_EQ(span_at("11", 0)["kind"], 1);
  EXPECT_EQ(span_at("11", 1)["kind"], 3);
  EXPECT_EQ(span_at("12", 0)["kind"], 2);
}

TEST(OtlpJson, IdsMatchTheTraceparentSondeInjectsFromTheRootThread) {
  const StitchedTrace s = test::stitched_sample();
  const std::vector<Span> spans = spans_of(write_lines({s}));
  // An OTel service called from Svc.submit (order index 3) received this header.
  const std::string header = traceparent(10, 3);
  const std::string w3c_trace_id = header.substr(3, 32);
  const std::string w3c_parent_id = header.substr(36, 16);
  bool found = false;
  for (const Span& sp : spans) {
    EXPECT_EQ(sp.span["traceId"], w3c_trace_id);
    if (sp.span["spanId"] == w3c_parent_id) {
      found = true;
      EXPECT_EQ(sp.span["name"], "Svc.submit()");
    }
  }
  EXPECT_TRUE(found) << "no span has the injected parent-id " << w3c_parent_id;
}

TEST(OtlpJson, ARootContinuingAnUnseenParentJoinsThatParentsTrace) {
  // This process received traceparent(77, 4): its trace 500 has parent 77 / order 4.
  Trace t = test::sample_trace(500, 1);
  t.parent_trace_id = 77;
  t.parent_order_id = 4;
  const std::vector<Span> spans = spans_of(write_lines({one_part_stitched_trace(t)}));
  ASSERT_EQ(spans.size(), t.executions.size());
  const std::string header = traceparent(77, 4);
  std::set<std::string> ids;
  for (const Span& sp : spans) {
    EXPECT_EQ(sp.span["traceId"], header.substr(3, 32));
    // Hashed ids: they cannot collide with the upstream's eoi + 1 ids.
    EXPECT_GE(std::stoull(sp.span["spanId"].get<std::string>(), nullptr, 16), uint64_t{1} << 63);
    ids.insert(sp.span["spanId"]);
    if (attribute(sp.span["attributes"], "sonde.eoi")["intValue"] == "0") {
      EXPECT_EQ(sp.span["parentSpanId"], header.substr(36, 16));
      EXPECT_EQ(sp.span["kind"], 2);  // SERVER: entered from another process
    }
  }
  EXPECT_EQ(ids.size(), spans.size());
}

TEST(OtlpJson, ATraceSondeDidNotStartKeepsItsW3cIdAndHangsFromTheForeignCaller) {
  // This process received 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
  // from another tracer: extract keeps the low half as the parent trace.
  Trace t = test::sample_trace(500, 1);
  t.parent_trace_id = static_cast<int64_t>(0xa3ce929d0e0e4736ULL);
  t.parent_order_id = -1;
  t.w3c = {0x4bf92f3577b34da6ULL, 0xa3ce929d0e0e4736ULL, 0x00f067aa0ba902b7ULL};
  const std::vector<Span> spans = spans_of(write_lines({one_part_stitched_trace(t)}));
  ASSERT_EQ(spans.size(), t.executions.size());
  std::set<std::string> ids;
  int roots = 0;
  for (const Span& sp : spans) {
    EXPECT_EQ(sp.span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_GE(std::stoull(sp.span["spanId"].get<std::string>(), nullptr, 16), uint64_t{1} << 63);
    ids.insert(sp.span["spanId"]);
    if (attribute(sp.span["attributes"], "sonde.eoi")["intValue"] == "0") {
      ++roots;
      EXPECT_EQ(sp.span["parentSpanId"], "00f067aa0ba902b7");
      EXPECT_EQ(sp.span["kind"], 2);  // SERVER: entered from another process
    }
  }
  EXPECT_EQ(roots, 1);
  EXPECT_EQ(ids.size(), spans.size());
}

TEST(OtlpJson, TraceIdZeroIsNeverTheInvalidAllZeroId) {
  EXPECT_EQ(otlp_trace_id(0), "00000000000000010000000000000000");
  EXPECT_EQ(otlp_trace_id(-1), "0000000000000000ffffffffffffffff");
  // An owner's first execution gets 1, never W3C's invalid 0; its order
  // index, not its eoi, decides (the eoi only stands in for
  // OperationExecutionRecords, which have no order index).
  Execution first;
  first.eoi = 0;
  first.order_index = 0;
  EXPECT_EQ(otlp_span_id(true, 6, first), 1u);
  Execution later;
  later.eoi = 2;
  later.order_index = 5;
  EXPECT_EQ(otlp_span_id(true, 6, later), 6u);
  later.order_index = -1;
  EXPECT_EQ(otlp_span_id(true, 6, later), 3u);
  // Continued parts: distinct per part, never an owner's small id.
  first.order_index = 0;
  EXPECT_NE(otlp_span_id(false, 6, first), otlp_span_id(false, 7, first));
}

TEST(OtlpJson, FailedExecutionsHaveStatusError) {
  OtlpJsonStats stats;
  const std::vector<Span> spans =
      spans_of(write_lines({one_part_stitched_trace(test::sample_trace())}, {}, &stats));
  EXPECT_EQ(stats.failed_spans, 1u);
  int errors = 0;
  for (const Span& sp : spans) {
    if (!sp.span.contains("status")) continue;
    ++errors;
    EXPECT_EQ(sp.span["status"]["code"], 2);
    EXPECT_EQ(sp.span["status"]["message"], "java.io.IOException: disk");
    EXPECT_EQ(sp.span["spanId"], "0000000000000005");
  }
  EXPECT_EQ(errors, 1);
}

TEST(OtlpJson, LinesHoldWholeTracesUpToTheBatchSize) {
  std::vector<StitchedTrace> traces;
  for (int64_t id = 1; id <= 5; ++id)
    traces.push_back(one_part_stitched_trace(test::sample_trace(id)));
  OtlpJsonOptions options;
  options.max_traces_per_line = 2;
  OtlpJsonStats stats;
  const std::vector<json> lines = write_lines(traces, options, &stats);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(stats.lines, 3u);
  EXPECT_EQ(spans_of({lines[0]}).size(), 10u);
  EXPECT_EQ(spans_of({lines[2]}).size(), 5u);
  for (const json& line : lines) expect_request_shape(line);

  EXPECT_TRUE(write_lines({}, options).empty());
}

TEST(OtlpJson, LinesStayUnderTheByteLimitBySplittingTracesAtSpans) {
  std::vector<StitchedTrace> traces;
  for (int64_t id = 1; id <= 5; ++id) {
    traces.push_back(one_part_stitched_trace(test::sample_trace(id)));
  }
  OtlpJsonOptions options;
  options.max_line_bytes = 3000;  // a few spans of ~700 bytes
  std::ostringstream out;
  OtlpJsonWriter writer(out, options);
  for (const StitchedTrace& t : traces) writer.on_stitched_trace(t);
  writer.finish();
  std::istringstream in(out.str());
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    EXPECT_LE(line.size() + 1, options.max_line_bytes);
    lines.push_back(json::parse(line));
    expect_request_shape(lines.back());
  }
  EXPECT_GT(lines.size(), 5u);  // traces were split
  EXPECT_EQ(writer.stats().lines, lines.size());
  // Nothing lost or duplicated: 25 distinct (traceId, spanId) pairs.
  std::set<std::pair<std::string, std::string>> ids;
  for (const Span& sp : spans_of(lines)) {
    ids.emplace(sp.span["traceId"].get<std::string>(), sp.span["spanId"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 25u);
}

TEST(OtlpJson, HostileNamesStayValidJson) {
  const std::string evil = "q\"uote\\back\nline\x02 </x> \xc3\x28 ok";
  Execution e = exec(evil, evil, kT0, kT0 + 10, 0, 0, evil);
  e.failed = true;
  e.cause = evil;
  const std::vector<json> lines =
      write_lines({one_part_stitched_trace(make_trace(1, 1, {e}, evil))});
  ASSERT_EQ(lines.size(), 1u);
  expect_request_shape(lines[0]);
  const std::vector<Span> spans = spans_of(lines);
  ASSERT_EQ(spans.size(), 1u);
  const std::string expected = "q\"uote\\back\nline\x02 </x> \xEF\xBF\xBD( ok";
  EXPECT_EQ(attribute(spans[0].span["attributes"], "sonde.operation")["stringValue"], expected);
  EXPECT_EQ(spans[0].span["status"]["message"], expected);
  EXPECT_EQ(attribute(spans[0].resource["attributes"], "host.name")["stringValue"], expected);
}

TEST(OtlpJson, KiekerBookstoreLogEndToEnd) {
  const std::string log = std::string(SONDE_TESTDATA_DIR) + "/kieker/bookstore-oer-2010/log";
  std::ostringstream out;
  OtlpJsonWriter writer(out);
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

  std::vector<json> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  EXPECT_EQ(lines.size(), (result.traces.valid + 63) / 64);
  for (const json& line : lines) expect_request_shape(line);
  const std::vector<Span> spans = spans_of(lines);
  EXPECT_EQ(spans.size(), result.traces.executions);
  // Within each trace: span ids unique, every parent present.
  std::map<std::string, std::set<std::string>> ids_per_trace;
  for (const Span& sp : spans) {
    EXPECT_TRUE(ids_per_trace[sp.span["traceId"]].insert(sp.span["spanId"]).second);
  }
  EXPECT_EQ(ids_per_trace.size(), result.traces.valid);
  for (const Span& sp : spans) {
    if (sp.span.contains("parentSpanId")) {
      EXPECT_EQ(ids_per_trace[sp.span["traceId"]].count(sp.span["parentSpanId"]), 1u);
    }
  }
}

}  // namespace
}  // namespace sonde::analysis
