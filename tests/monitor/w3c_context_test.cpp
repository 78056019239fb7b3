// W3C trace context through a real monitored program: a traceparent from a
// tracer other than sonde is continued with its 128-bit trace id kept
// whole, in the log and in every traceparent the program sends on; each
// parent-id it sends is the span id the OTLP export gives the sending
// execution; and the export hangs the server's root span from the foreign
// caller's span. Also sonde's own form across two processes, read one log
// at a time, as two services exporting apart would be.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "analysis/export/otlp_spans.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/log_reader.hpp"
#include "format/record_log_writer.hpp"
#include "run_helpers.hpp"
#include "stitched_log.hpp"

namespace sonde::test {
namespace {

// "<who> sends 00-<trace id>-<parent id>-01" lines of the program's stderr.
std::map<std::string, std::pair<std::string, uint64_t>> sent_headers(const std::string& err) {
  std::map<std::string, std::pair<std::string, uint64_t>> sent;
  const std::regex line(R"((\w+) sends 00-([0-9a-f]{32})-([0-9a-f]{16})-01)");
  for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it) {
    sent[(*it)[1]] = {(*it)[2], std::stoull((*it)[3], nullptr, 16)};
  }
  return sent;
}

std::string trace_id_hex(const std::array<uint8_t, 16>& id) {
  std::string hex;
  for (uint8_t b : id) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

const analysis::OtlpSpan* span_named(const std::vector<analysis::OtlpSpan>& spans,
                                     const std::string& text) {
  for (const analysis::OtlpSpan& s : spans) {
    if (s.name.find(text) != std::string::npos) return &s;
  }
  return nullptr;
}

const analysis::OtlpSpan* span_with_id(const std::vector<analysis::OtlpSpan>& spans, uint64_t id) {
  for (const analysis::OtlpSpan& s : spans) {
    if (s.span_id == id) return &s;
  }
  return nullptr;
}

// Records as a sink without the typed path sees them, fed on to trace
// reconstruction through on_record.
struct W3cRecordStream : format::RecordSink, analysis::TraceSink {
  W3cRecordStream() : reconstructor(*this) {}
  bool on_record(const format::Record& r) override {
    if (r.schema != nullptr && r.schema->class_name == format::w3c::kTraceContextClass) {
      format::w3c::Context w3c;
      w3c.trace_id_high = static_cast<uint64_t>(std::get<int64_t>(r.values.at(1)));
      w3c.trace_id_low = static_cast<uint64_t>(std::get<int64_t>(r.values.at(2)));
      w3c.parent_span_id = static_cast<uint64_t>(std::get<int64_t>(r.values.at(3)));
      contexts.emplace_back(last_was_metadata, w3c);
    }
    last_was_metadata = r.schema != nullptr && r.schema->class_name.ends_with("TraceMetadata");
    return reconstructor.on_record(r);
  }
  void on_trace(const analysis::Trace& t) override { traces_with_w3c += t.w3c.present(); }
  void on_invalid_trace(const analysis::InvalidTrace&) override { ++invalid; }
  analysis::TraceReconstructor reconstructor;
  std::vector<std::pair<bool, format::w3c::Context>> contexts;
  bool last_was_metadata = false;
  size_t traces_with_w3c = 0;
  size_t invalid = 0;
  ~W3cRecordStream() override = default;
};

void expect_foreign_round_trip(const std::string& name, const std::string& trace_id, uint64_t high,
                               uint64_t low) {
  const std::string caller_span = "00f067aa0ba902b7";
  const std::string header = "00-" + trace_id + "-" + caller_span + "-01";
  const std::string out = fresh_dir(name);
  RunResult r = run_program({kWorkload, "1", "0", "0", "foreign", header}, env_for(out));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto sent = sent_headers(r.stderr_text);
  ASSERT_EQ(sent.count("server"), 1u) << r.stderr_text;
  ASSERT_EQ(sent.count("worker"), 1u) << r.stderr_text;
  // The foreign trace id goes on whole, from the thread that continued it
  // and from the one it handed the context to.
  EXPECT_EQ(sent.at("server").first, trace_id);
  EXPECT_EQ(sent.at("worker").first, trace_id);

  StitchedLog log(files_with_suffix(out, ".sonde").at(0));
  ASSERT_TRUE(log.read.ok) << (log.read.errors.empty() ? "" : log.read.errors[0]);
  ASSERT_EQ(log.out.traces.size(), 1u);
  const analysis::StitchedTrace& t = log.out.traces[0];
  ASSERT_EQ(t.parts.size(), 2u);
  EXPECT_EQ(t.parts[0].trace.w3c, (format::w3c::Context{high, low, 0x00f067aa0ba902b7ULL}));
  ASSERT_EQ(t.parts[1].parent_execution, 0) << "captured inside shop.server";

  const std::vector<analysis::OtlpSpan> spans = analysis::otlp_spans(t);
  ASSERT_EQ(spans.size(), 4u);  // server, leaf, worker, leaf
  for (const analysis::OtlpSpan& s : spans) EXPECT_EQ(trace_id_hex(s.trace_id), trace_id);
  const analysis::OtlpSpan* server = span_named(spans, "shop.server");
  const analysis::OtlpSpan* worker = span_named(spans, "shop.worker");
  ASSERT_TRUE(server && worker);
  EXPECT_EQ(server->parent_span_id, 0x00f067aa0ba902b7ULL) << "hangs from the foreign caller";
  EXPECT_EQ(server->kind, analysis::OtlpSpanKind::kServer);
  EXPECT_EQ(worker->parent_span_id, server->span_id);
  // The worker's part keeps the W3C trace and the span it was handed from,
  // which an export of the part alone (a snapshot) hangs it from.
  EXPECT_EQ(t.parts[1].trace.w3c, (format::w3c::Context{high, low, server->span_id}));
  // What each sent is the span of the execution that sent it: a callee
  // returned before each send, so the position was not that execution's
  // enter.
  const analysis::OtlpSpan* server_sent = span_with_id(spans, sent.at("server").second);
  const analysis::OtlpSpan* worker_sent = span_with_id(spans, sent.at("worker").second);
  ASSERT_TRUE(server_sent && worker_sent) << r.stderr_text;
  EXPECT_EQ(server_sent, server);
  EXPECT_EQ(worker_sent, worker);

  // The record path (record streams, `sonde listen --to native`): a
  // TraceContext record right after each continued trace's TraceMetadata,
  // which trace reconstruction from records keeps too; Kieker logs leave
  // it out.
  W3cRecordStream records;
  ASSERT_TRUE(format::read_log(files_with_suffix(out, ".sonde").at(0), records).ok);
  records.reconstructor.finish();
  EXPECT_EQ(records.invalid, 0u);
  ASSERT_EQ(records.contexts.size(), 2u);
  for (const auto& [after_metadata, w3c] : records.contexts) {
    EXPECT_TRUE(after_metadata);
    EXPECT_EQ(w3c.trace_id_high, high);
    EXPECT_EQ(w3c.trace_id_low, low);
  }
  EXPECT_EQ(records.traces_with_w3c, 2u);
  auto kieker = format::open_record_log(format::OutputFormat::kKiekerDat, out + "/kieker");
  ASSERT_TRUE(format::read_log(files_with_suffix(out, ".sonde").at(0), *kieker).ok);
  EXPECT_EQ(kieker->finish(), "");
  std::ifstream map(out + "/kieker/kieker.map");
  const std::string map_text((std::istreambuf_iterator<char>(map)), {});
  EXPECT_NE(map_text.find("TraceMetadata"), std::string::npos);
  EXPECT_EQ(map_text.find("TraceContext"), std::string::npos) << map_text;
}

TEST(W3cContext, AForeign128BitTraceIsKeptWholeAndWhatIsSentOnIsAnExportedSpan) {
  expect_foreign_round_trip("w3c_foreign", "4bf92f3577b34da6a3ce929d0e0e4736",
                            0x4bf92f3577b34da6ULL, 0xa3ce929d0e0e4736ULL);
}

TEST(W3cContext, AForeign64BitTraceIdIsKeptTooThoughItsHighHalfIsZero) {
  // Tracers with 64-bit ids send a zero high half; the parent-id, beyond
  // any order index, tells it from sonde's own form.
  expect_foreign_round_trip("w3c_foreign64", "0000000000000000a3ce929d0e0e4736", 0,
                            0xa3ce929d0e0e4736ULL);
}

TEST(W3cContext, AServerCalledFromAContinuedPartHangsUnderTheSendingExecution) {
  // The relay thread continued the client's context; what it sends names
  // a span of a continued part (top bit set), no position: the server's
  // part still stitches under shop.relay, and its export hangs there.
  const std::string out = fresh_dir("w3c_relay");
  RunResult r = run_program({kWorkload, "1", "0", "0", "relay"}, env_for(out));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  StitchedLog both(out);
  ASSERT_TRUE(both.read.ok) << (both.read.errors.empty() ? "" : both.read.errors[0]);
  ASSERT_EQ(both.out.traces.size(), 1u);
  const analysis::StitchedTrace& t = both.out.traces[0];
  ASSERT_EQ(t.parts.size(), 3u);
  const analysis::SubTrace& server = t.parts[2];
  ASSERT_FALSE(server.trace.executions.empty());
  EXPECT_NE(std::string(server.trace.executions[0].operation).find("shop.server"),
            std::string::npos);
  ASSERT_EQ(server.parent, 1);
  ASSERT_EQ(server.parent_execution, 0) << "under shop.relay";
  const std::vector<analysis::OtlpSpan> spans = analysis::otlp_spans(t);
  const analysis::OtlpSpan* relay = span_named(spans, "shop.relay");
  const analysis::OtlpSpan* served = span_named(spans, "shop.server");
  ASSERT_TRUE(relay && served);
  EXPECT_EQ(served->parent_span_id, relay->span_id);
}

TEST(W3cContext, TwoProcessesExportedApartJoinUnderTheSpanTheClientSent) {
  const std::string out = fresh_dir("w3c_remote");
  RunResult r = run_program({kWorkload, "1", "0", "0", "remote"}, env_for(out));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::vector<std::string> logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 2u);
  const analysis::OtlpSpan* client = nullptr;
  const analysis::OtlpSpan* server = nullptr;
  std::vector<analysis::OtlpSpan> spans[2];
  for (size_t i = 0; i < 2; ++i) {
    StitchedLog log(logs[i]);
    ASSERT_TRUE(log.read.ok);
    ASSERT_EQ(log.out.traces.size(), 1u);
    spans[i] = analysis::otlp_spans(log.out.traces[0]);
    if (const analysis::OtlpSpan* s = span_named(spans[i], "shop.client")) client = s;
    if (const analysis::OtlpSpan* s = span_named(spans[i], "shop.server")) server = s;
  }
  ASSERT_TRUE(client && server);
  EXPECT_EQ(client->trace_id, server->trace_id);
  EXPECT_EQ(server->parent_span_id, client->span_id)
      << "the client sent its traceparent after shop.leaf returned";
  EXPECT_EQ(server->kind, analysis::OtlpSpanKind::kServer);
}

}  // namespace
}  // namespace sonde::test
