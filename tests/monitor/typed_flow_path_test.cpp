// A native log read through the typed fast path (format/typed_flow_sink.hpp)
// must reconstruct exactly the traces the generic record path gives: same
// ids, metadata, executions, names, times, failures, and the same record
// counts per type.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/log_reader.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

// Traces as plain strings, so two pools can be compared.
class TraceText final : public analysis::TraceSink {
 public:
  void on_trace(const analysis::Trace& t) override {
    std::string s = std::to_string(t.thread_id) + " " + std::string(t.host) + " " +
                    std::to_string(t.parent_trace_id) + " " + std::to_string(t.parent_order_id);
    for (const analysis::Execution& e : t.executions) {
      s += "\n" + std::to_string(e.eoi) + "/" + std::to_string(e.ess) + " " +
           std::string(e.component) + " " + std::string(e.operation) + " " + std::to_string(e.tin) +
           ".." + std::to_string(e.tout) + (e.failed ? " failed: " + std::string(e.cause) : "");
    }
    valid[t.trace_id] = s;
  }
  void on_invalid_trace(const analysis::InvalidTrace& t) override { invalid[t.trace_id]++; }

  std::map<int64_t, std::string> valid;
  std::map<int64_t, int> invalid;
};

// Hides the reconstructor's typed path: every record arrives as a Record.
class RecordsOnly final : public format::RecordSink {
 public:
  explicit RecordsOnly(format::RecordSink& inner) : inner_(inner) {}
  bool on_record(const format::Record& r) override { return inner_.on_record(r); }

 private:
  format::RecordSink& inner_;
};

TEST(TypedFlowPath, SameTracesAndCountsAsTheRecordPath) {
  const std::string out = fresh_dir("typed_flow");
  RunResult r = run_program({kPrograms + "/test_workload", "3", "400", "3", "throw"},
                            {"SONDE_OUT=" + out, "SONDE_SUMMARY=false"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 1u);

  TraceText typed_traces, record_traces;
  analysis::TraceReconstructor typed(typed_traces);
  analysis::TraceReconstructor generic(record_traces);
  ASSERT_NE(typed.typed_flow(), nullptr);
  RecordsOnly records_only(generic);
  ASSERT_TRUE(format::read_log(logs[0], typed).ok);
  ASSERT_TRUE(format::read_log(logs[0], records_only).ok);
  typed.finish();
  generic.finish();

  // 3 threads x (2 per iteration x 400 + 1 failing) traces, all valid.
  EXPECT_EQ(typed_traces.valid.size(), 3u * (2 * 400 + 1));
  EXPECT_TRUE(typed_traces.invalid.empty());
  EXPECT_EQ(typed_traces.valid, record_traces.valid);
  EXPECT_EQ(typed_traces.invalid, record_traces.invalid);
  EXPECT_EQ(typed.stats().records, generic.stats().records);
  EXPECT_EQ(typed.stats().flow_records, generic.stats().flow_records);
  EXPECT_EQ(typed.record_type_counts(), generic.record_type_counts());
  // And both agree with a plain count of the records in the log.
  const LogContents c = read_contents(logs[0]);
  std::map<std::string, uint64_t> expected;
  for (const auto& [cls, n] : c.records_by_class) expected[cls] = static_cast<uint64_t>(n);
  EXPECT_EQ(typed.record_type_counts(), expected);
}

}  // namespace
}  // namespace sonde::test
