// KiekerFlowBuilder keeps every event: a stream that starts in the middle
// of a trace (a collector restarted while the writer resent from a chunk
// that began mid-trace) gets its events in a trace of their own instead of
// losing them (SondeCli.CollectKilledAndRestartedLosesAndDuplicatesNothing
// lost 3 events this way).
#include "format/kieker_flow.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sonde::format {
namespace {

class FlowClassNames final : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    names.push_back(r.schema->class_name);
    if (r.schema->class_name.find("TraceMetadata") != std::string::npos)
      trace_ids.push_back(r.i64(0));
    return true;
  }
  std::vector<std::string> names;
  std::vector<int64_t> trace_ids;
};

FlowEvent flow_event(native::EventKind kind, int64_t time_ns, uint64_t trace_id = 0) {
  FlowEvent e;
  e.kind = kind;
  e.time_ns = time_ns;
  e.op = 1;
  e.trace_id = trace_id;
  return e;
}

TEST(KiekerFlowBuilder, EventsOfATraceThatBeganBeforeTheStreamAreKept) {
  FlowClassNames sink;
  StringPool pool;
  KiekerFlowBuilder flow(sink, pool);
  flow.define_operation(1, "void work()", "app");
  flow.define_thread(7, 4242);
  using native::EventKind;
  // The continuation of a trace begun elsewhere: enter, exit, then the
  // exit of the caller whose enter is in the other stream.
  ASSERT_TRUE(flow.event(7, flow_event(EventKind::kEnter, 10)));
  ASSERT_TRUE(flow.event(7, flow_event(EventKind::kExit, 20)));
  ASSERT_TRUE(flow.event(7, flow_event(EventKind::kExit, 30)));
  // Then a trace as usual.
  ASSERT_TRUE(flow.event(7, flow_event(EventKind::kTraceBegin, 40, 99)));
  ASSERT_TRUE(flow.event(7, flow_event(EventKind::kEnter, 41)));
  ASSERT_TRUE(flow.event(7, flow_event(EventKind::kExit, 42)));
  const std::vector<std::string> expected = {
      "kieker.common.record.flow.trace.TraceMetadata",
      "kieker.common.record.flow.trace.operation.BeforeOperationEvent",
      "kieker.common.record.flow.trace.operation.AfterOperationEvent",
      "kieker.common.record.flow.trace.operation.AfterOperationEvent",
      "kieker.common.record.flow.trace.TraceMetadata",
      "kieker.common.record.flow.trace.operation.BeforeOperationEvent",
      "kieker.common.record.flow.trace.operation.AfterOperationEvent"};
  EXPECT_EQ(sink.names, expected);
  ASSERT_EQ(sink.trace_ids.size(), 2u);
  EXPECT_NE(sink.trace_ids[0], 99) << "the orphaned events get a trace id of their own";
  EXPECT_GT(sink.trace_ids[0], 0);
  EXPECT_EQ(sink.trace_ids[1], 99);
}

}  // namespace
}  // namespace sonde::format
