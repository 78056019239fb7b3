// OperationExecutionRecord traces: grouped by trace id, ordered by eoi and
// checked against Kieker's rules (eoi 0..n-1, entry at ess 0, ess grows by
// at most one).
#include <gtest/gtest.h>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

using testing::CollectingSink;
using testing::RecordFeeder;
using testing::shape;
using Shape = std::vector<std::string>;

struct RecordFixture {
  explicit RecordFixture(ReconstructionOptions options = {}) : rec(sink, options), feed(rec) {}
  CollectingSink sink;
  TraceReconstructor rec;
  RecordFeeder feed;
};

TEST(ExecutionRecordReconstruction, WrittenAtExitAndClosedOnEntry) {
  // a.B.search() { a.C.get(); a.D.offers() { a.C.get() } }, records in
  // exit order as a probe writes them; hosts differ per execution.
  RecordFixture f;
  f.feed.execution(42, "a.C.get(boolean)", 11, 20, 1, 1, "SRV1");
  f.feed.execution(42, "a.C.get(boolean)", 31, 38, 3, 2, "SRV0");
  f.feed.execution(42, "a.D.offers()", 30, 40, 2, 1, "SRV0");
  EXPECT_TRUE(f.sink.valid.empty());
  f.feed.execution(42, "a.B.search()", 10, 50, 0, 0, "SRV0");
  ASSERT_EQ(f.sink.valid.size(), 1u);  // closed by its entry, before finish()
  const Trace& t = f.sink.valid[0];
  EXPECT_EQ(shape(t), (Shape{"a.B.search()@0,0", "a.C.get(boolean)@1,1", "a.D.offers()@2,1",
                             "a.C.get(boolean)@3,2"}));
  EXPECT_EQ(t.origin, TraceOrigin::kExecutionRecords);
  EXPECT_EQ(t.trace_id, 42);
  EXPECT_EQ(t.host, "SRV0");
  EXPECT_EQ(t.session, "N/A");
  EXPECT_EQ(t.thread_id, -1);
  EXPECT_EQ(t.executions[1].host, "SRV1");
  EXPECT_EQ(t.executions[1].component, "a.C");  // from the signature
  EXPECT_EQ(t.executions[2].component, "a.D");
  EXPECT_EQ(t.duration(), 40);
  f.rec.finish();
  EXPECT_TRUE(f.sink.invalid.empty());
}

TEST(ExecutionRecordReconstruction, WithoutCloseOnEntryWaitsForTheEnd) {
  ReconstructionOptions o;
  o.close_execution_traces_on_entry = false;
  RecordFixture f(o);
  f.feed.execution(1, "x.Y.f()", 0, 10, 0, 0);
  EXPECT_TRUE(f.sink.valid.empty());
  f.rec.finish();
  ASSERT_EQ(f.sink.valid.size(), 1u);
}

TEST(ExecutionRecordReconstruction, MultipleRootsAreAllowedAsInKieker) {
  ReconstructionOptions o;
  o.close_execution_traces_on_entry = false;
  RecordFixture f(o);
  f.feed.execution(1, "x.Y.f()", 0, 10, 0, 0);
  f.feed.execution(1, "x.Y.g()", 20, 30, 1, 0);
  f.rec.finish();
  ASSERT_EQ(f.sink.valid.size(), 1u);
  EXPECT_EQ(shape(f.sink.valid[0]), (Shape{"x.Y.f()@0,0", "x.Y.g()@1,0"}));
}

TEST(ExecutionRecordReconstruction, EoiGap) {
  RecordFixture f;
  f.feed.execution(2, "x.Y.b()", 5, 6, 2, 1);
  f.feed.execution(2, "x.Y.a()", 0, 10, 0, 0);  // eoi 1 never arrives
  EXPECT_TRUE(f.sink.valid.empty());
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kEoiGap);
  EXPECT_EQ(t.problems.front().detail, "eoi gap at 1 (next eoi is 2)");
}

TEST(ExecutionRecordReconstruction, DuplicateEoi) {
  RecordFixture f;
  f.feed.execution(3, "x.Y.b()", 1, 2, 1, 1);
  f.feed.execution(3, "x.Y.c()", 3, 4, 1, 1);
  f.feed.execution(3, "x.Y.a()", 0, 10, 0, 0);
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.closed_by, CloseCause::kComplete);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kDuplicateEoi);
  EXPECT_EQ(t.problems.front().detail, "duplicate eoi 1");
}

TEST(ExecutionRecordReconstruction, EntryNotAtEssZero) {
  RecordFixture f;
  f.feed.execution(4, "x.Y.a()", 0, 10, 0, 1);
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kBadEntryEss);
  EXPECT_EQ(t.problems.front().detail, "first execution x.Y.a() has ess 1, expected 0");
}

TEST(ExecutionRecordReconstruction, EssJump) {
  RecordFixture f;
  f.feed.execution(5, "x.Y.b()", 1, 2, 1, 2);  // ess 0 -> 2: a caller is missing
  f.feed.execution(5, "x.Y.a()", 0, 10, 0, 0);
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kEssJump);
  EXPECT_EQ(t.problems.front().detail, "ess jumps from 0 to 2 at eoi 1 (op x.Y.b())");
}

TEST(ExecutionRecordReconstruction, FlowAndExecutionRecordsWithOneIdAreSeparateTraces) {
  RecordFixture f;
  f.feed.execution(9, "x.Y.a()", 0, 10, 0, 0);
  f.feed.metadata(9);
  f.feed.before(9, 0, 0, "b");
  f.feed.after(9, 1, 1, "b");
  ASSERT_EQ(f.sink.valid.size(), 2u);
  EXPECT_EQ(f.sink.valid[0].origin, TraceOrigin::kExecutionRecords);
  EXPECT_EQ(f.sink.valid[1].origin, TraceOrigin::kFlowEvents);
}

}  // namespace
}  // namespace sonde::analysis
