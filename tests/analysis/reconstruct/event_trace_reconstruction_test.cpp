// Flow-event traces (TraceMetadata + Before/After events): hand-built logs
// with eoi/ess worked out by hand, and one test per reason a trace is invalid.
#include <gtest/gtest.h>

#include <map>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

using testing::CollectingSink;
using testing::RecordFeeder;
using testing::shape;
using Shape = std::vector<std::string>;

using EventFixture = testing::FedReconstructor;

TEST(EventTraceReconstruction, SiblingsAndNesting) {
  // main { a { b } c }  -> eoi in call order, ess = depth.
  EventFixture f;
  f.feed.metadata(7, "srv");
  f.feed.before(7, 0, 100, "main");
  f.feed.before(7, 1, 110, "a");
  f.feed.before(7, 2, 120, "b");
  f.feed.after(7, 3, 130, "b");
  f.feed.after(7, 4, 140, "a");
  f.feed.before(7, 5, 150, "c");
  f.feed.after(7, 6, 160, "c");
  f.feed.after(7, 7, 200, "main");
  // Handed on as soon as complete, before finish().
  ASSERT_EQ(f.sink.valid.size(), 1u);
  EXPECT_EQ(f.rec.open_traces(), 0u);
  const Trace& t = f.sink.valid[0];
  EXPECT_EQ(shape(t), (Shape{"main@0,0", "a@1,1", "b@2,2", "c@3,1"}));
  EXPECT_EQ(t.trace_id, 7);
  EXPECT_EQ(t.host, "srv");
  EXPECT_EQ(t.thread_id, 1);
  EXPECT_EQ(t.parent_trace_id, 7);
  EXPECT_EQ(t.parent_order_id, -1);
  EXPECT_EQ(t.origin, TraceOrigin::kFlowEvents);
  EXPECT_EQ(t.executions[0].tin, 100);
  EXPECT_EQ(t.executions[0].tout, 200);
  EXPECT_EQ(t.executions[2].duration(), 10);
  EXPECT_EQ(t.executions[3].component, "C");
  EXPECT_EQ(t.executions[3].host, "srv");
  EXPECT_EQ(t.duration(), 100);
  f.rec.finish();
  EXPECT_TRUE(f.sink.invalid.empty());
}

TEST(EventTraceReconstruction, Recursion) {
  // f { f { f { g } } }
  EventFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "f");
  f.feed.before(1, 1, 1, "f");
  f.feed.before(1, 2, 2, "f");
  f.feed.before(1, 3, 3, "g");
  f.feed.after(1, 4, 4, "g");
  f.feed.after(1, 5, 5, "f");
  f.feed.after(1, 6, 6, "f");
  f.feed.after(1, 7, 7, "f");
  ASSERT_EQ(f.sink.valid.size(), 1u);
  const Trace& t = f.sink.valid[0];
  EXPECT_EQ(shape(t), (Shape{"f@0,0", "f@1,1", "f@2,2", "g@3,3"}));
  EXPECT_EQ(t.executions[0].duration(), 7);
  EXPECT_EQ(t.executions[1].duration(), 5);
  EXPECT_EQ(t.executions[2].duration(), 3);
}

TEST(EventTraceReconstruction, FailedEventsKeepTheirCause) {
  EventFixture f;
  f.feed.metadata(3);
  f.feed.before(3, 0, 0, "main");
  f.feed.before(3, 1, 5, "parse");
  f.feed.failed(3, 2, 9, "parse", "std::runtime_error: bad input");
  f.feed.failed(3, 3, 12, "main", "std::runtime_error: bad input");
  ASSERT_EQ(f.sink.valid.size(), 1u);
  const Trace& t = f.sink.valid[0];
  EXPECT_EQ(shape(t), (Shape{"main@0,0", "parse@1,1"}));
  EXPECT_TRUE(t.executions[0].failed);
  EXPECT_TRUE(t.executions[1].failed);
  EXPECT_EQ(t.executions[1].cause, "std::runtime_error: bad input");
  EXPECT_EQ(t.executions[1].tout, 9);
}

TEST(EventTraceReconstruction, InterleavedTracesAndMetadataLast) {
  EventFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "a");
  f.feed.before(2, 0, 1, "x");  // trace 2's metadata comes last
  f.feed.after(2, 1, 2, "x");
  f.feed.after(1, 1, 3, "a");
  ASSERT_EQ(f.sink.valid.size(), 1u);
  EXPECT_EQ(f.sink.valid[0].trace_id, 1);
  f.feed.metadata(2);
  ASSERT_EQ(f.sink.valid.size(), 2u);
  EXPECT_EQ(f.sink.valid[1].trace_id, 2);
}

// The reconstructor reuses a closed trace's event vector and the result
// it builds into for the next trace: nothing of one trace may show in the
// next, a longer trace before a shorter one, an invalid one between.
TEST(EventTraceReconstruction, EachTraceIsBuiltFromItsOwnEventsOnly) {
  EventFixture f;
  f.feed.metadata(1, "first");
  f.feed.before(1, 0, 0, "main");
  f.feed.before(1, 1, 1, "a");
  f.feed.failed(1, 2, 2, "a", "E");
  f.feed.before(1, 3, 3, "b");
  f.feed.after(1, 4, 4, "b");
  f.feed.after(1, 5, 5, "main");
  f.feed.metadata(2, "second");
  f.feed.before(2, 0, 10, "x");
  f.feed.after(2, 1, 11, "x");
  f.feed.metadata(3);  // complete but invalid: its after names another operation
  f.feed.before(3, 0, 20, "open");
  f.feed.after(3, 1, 21, "other");
  ASSERT_EQ(f.sink.invalid.size(), 1u);  // closed before trace 4 starts
  f.feed.metadata(4, "fourth");
  f.feed.before(4, 0, 30, "y");
  f.feed.after(4, 1, 31, "y");
  f.rec.finish();
  ASSERT_EQ(f.sink.valid.size(), 3u);
  EXPECT_EQ(shape(f.sink.valid[0]), (Shape{"main@0,0", "a@1,1", "b@2,1"}));
  EXPECT_TRUE(f.sink.valid[0].executions[1].failed);
  EXPECT_EQ(shape(f.sink.valid[1]), (Shape{"x@0,0"}));
  EXPECT_EQ(f.sink.valid[1].host, "second");
  EXPECT_FALSE(f.sink.valid[1].executions[0].failed);
  EXPECT_EQ(f.sink.valid[1].executions[0].tin, 10);
  EXPECT_EQ(shape(f.sink.valid[2]), (Shape{"y@0,0"}));
  EXPECT_EQ(f.sink.valid[2].trace_id, 4);
  ASSERT_EQ(f.sink.invalid.size(), 1u);
  EXPECT_EQ(f.sink.invalid[0].trace_id, 3);
  EXPECT_EQ(f.sink.invalid[0].problems.front().kind, TraceProblemKind::kMismatchedAfterEvent);
}

TEST(EventTraceReconstruction, OutOfOrderEventsAreSortedByOrderIndex) {
  EventFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 1, 1, "b");
  f.feed.after(1, 3, 4, "a");
  f.feed.after(1, 2, 2, "b");
  f.feed.before(1, 0, 0, "a");
  ASSERT_EQ(f.sink.valid.size(), 1u);
  EXPECT_EQ(shape(f.sink.valid[0]), (Shape{"a@0,0", "b@1,1"}));
}

TEST(EventTraceReconstruction, CallEventsTakeAnOrderIndexWithoutAGap) {
  EventFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "a");
  f.feed.call(1, 1, 1, "a", "b");
  f.feed.before(1, 2, 2, "b");
  f.feed.after(1, 3, 3, "b");
  f.feed.after(1, 4, 4, "a");
  ASSERT_EQ(f.sink.valid.size(), 1u);
  EXPECT_EQ(shape(f.sink.valid[0]), (Shape{"a@0,0", "b@1,1"}));
}

TEST(EventTraceReconstruction, UnusedRecordsAreCountedNotTraced) {
  EventFixture f;
  f.feed.cpu(5);
  f.rec.finish();
  EXPECT_EQ(f.rec.stats().records, 1u);
  EXPECT_EQ(f.rec.stats().ignored_records, 1u);
  EXPECT_TRUE(f.sink.valid.empty());
  EXPECT_TRUE(f.sink.invalid.empty());
}

// ---- Invalid traces: each reason ------------------------------------------

TEST(EventTraceReconstruction, NoTraceMetadata) {
  EventFixture f;
  f.feed.before(4, 0, 0, "a");
  f.feed.after(4, 1, 1, "a");
  EXPECT_TRUE(f.sink.valid.empty());  // not complete without metadata
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.trace_id, 4);
  EXPECT_EQ(t.closed_by, CloseCause::kEndOfInput);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kNoTraceMetadata);
  EXPECT_EQ(t.problems.front().detail, "no TraceMetadata");
  EXPECT_EQ(t.records, 2u);
  // What could be reconstructed is kept.
  EXPECT_EQ(shape(t.partial), (Shape{"a@0,0"}));
}

TEST(EventTraceReconstruction, DuplicateTraceMetadata) {
  EventFixture f;
  f.feed.metadata(4);
  f.feed.metadata(4);
  f.feed.before(4, 0, 0, "a");
  f.feed.after(4, 1, 1, "a");
  f.rec.finish();
  EXPECT_EQ(testing::only_invalid(f.sink).problems.front().kind,
            TraceProblemKind::kDuplicateTraceMetadata);
}

TEST(EventTraceReconstruction, NoEntryEvent) {
  // The before event with order index 0 was lost.
  EventFixture f;
  f.feed.metadata(5);
  f.feed.before(5, 1, 1, "b");
  f.feed.after(5, 2, 2, "b");
  f.feed.after(5, 3, 3, "a");
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kNoEntryEvent);
  bool gap_at_0 = false;
  for (const auto& p : t.problems) gap_at_0 |= p.detail == "order index gap at 0";
  EXPECT_TRUE(gap_at_0);
}

TEST(EventTraceReconstruction, MissingAfterEvent) {
  EventFixture f;
  f.feed.metadata(6);
  f.feed.before(6, 0, 0, "main");
  f.feed.before(6, 1, 1, "work");
  f.feed.after(6, 2, 2, "work");
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0].kind, TraceProblemKind::kMissingAfterEvent);
  EXPECT_EQ(t.problems[0].detail, "missing after event for op main (eoi 0)");
  EXPECT_EQ(t.partial.executions[0].tout, -1);
  EXPECT_EQ(t.partial.executions[1].tout, 2);
}

TEST(EventTraceReconstruction, MismatchedAfterEvent) {
  // Balanced counts, but the after events close the wrong operations.
  EventFixture f;
  f.feed.metadata(8);
  f.feed.before(8, 0, 0, "a");
  f.feed.before(8, 1, 1, "b");
  f.feed.after(8, 2, 2, "a");
  f.feed.after(8, 3, 3, "b");
  const InvalidTrace& t =
      testing::only_invalid(f.sink);  // closed at once: complete but inconsistent
  EXPECT_EQ(t.closed_by, CloseCause::kComplete);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kMismatchedAfterEvent);
  EXPECT_EQ(t.problems.front().detail, "after event for op a (order index 2) while op b is open");
}

TEST(EventTraceReconstruction, UnmatchedAfterEvent) {
  EventFixture f;
  f.feed.metadata(9);
  f.feed.after(9, 2, 3, "stray");
  f.feed.before(9, 0, 0, "a");
  f.feed.after(9, 1, 1, "a");
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kUnmatchedAfterEvent);
  EXPECT_EQ(t.problems.front().detail,
            "after event for op stray (order index 2) with no open before event");
}

TEST(EventTraceReconstruction, OrderIndexGap) {
  // Events 3 and 4 were lost: balanced, but indices are not 0..n-1.
  EventFixture f;
  f.feed.metadata(10);
  f.feed.before(10, 0, 0, "a");
  f.feed.before(10, 1, 1, "b");
  f.feed.after(10, 2, 2, "b");
  f.feed.after(10, 5, 5, "a");
  EXPECT_TRUE(f.sink.valid.empty());
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kOrderIndexGap);
  EXPECT_EQ(t.problems.front().detail, "order index gap at 3 (2 missing)");
}

TEST(EventTraceReconstruction, DuplicateOrderIndex) {
  EventFixture f;
  f.feed.metadata(11);
  f.feed.before(11, 0, 0, "a");
  f.feed.before(11, 1, 1, "b");
  f.feed.before(11, 1, 1, "b");
  f.feed.after(11, 2, 2, "b");
  f.feed.after(11, 3, 3, "a");
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  bool duplicate = false;
  for (const auto& p : t.problems) {
    duplicate |=
        p.kind == TraceProblemKind::kDuplicateOrderIndex && p.detail == "duplicate order index 1";
  }
  EXPECT_TRUE(duplicate);
}

TEST(EventTraceReconstruction, OnlyMetadataMeansNoExecutions) {
  EventFixture f;
  f.feed.metadata(12);
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kNoEntryEvent);
  EXPECT_EQ(t.problems.back().kind, TraceProblemKind::kNoExecutions);
}

// ---- Bounds --------------------------------------------------------------

TEST(EventTraceReconstruction, MaxOpenTracesEvictsTheLeastRecentlyActive) {
  ReconstructionOptions o;
  o.max_open_traces = 2;
  EventFixture f(o);
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "a");
  f.feed.metadata(2);
  f.feed.before(2, 0, 1, "b");
  f.feed.metadata(3);  // third open trace: trace 1 is evicted
  EXPECT_EQ(f.rec.open_traces(), 2u);
  ASSERT_EQ(f.sink.invalid.size(), 1u);
  EXPECT_EQ(f.sink.invalid[0].trace_id, 1);
  EXPECT_EQ(f.sink.invalid[0].closed_by, CloseCause::kEvicted);
  EXPECT_EQ(f.sink.invalid[0].problems.front().kind, TraceProblemKind::kMissingAfterEvent);
  EXPECT_EQ(f.rec.stats().evicted_traces, 1u);
  EXPECT_EQ(f.rec.stats().peak_open_traces, 3u);

  // A late event for the evicted trace opens a fragment, flagged as such.
  f.feed.after(1, 1, 2, "a");
  f.rec.finish();
  EXPECT_EQ(f.rec.stats().reopened_trace_ids, 1u);
  bool flagged = false;
  for (const auto& t : f.sink.invalid) {
    if (t.trace_id == 1 && t.closed_by == CloseCause::kEndOfInput) {
      flagged = t.problems.front().detail.find("closed shortly before") != std::string::npos;
    }
  }
  EXPECT_TRUE(flagged);
}

// The last 65,536 closed ids are remembered, the oldest forgotten as each
// new one comes: a late record flags only an id closed recently, and an id
// closed again (remembered already) does not push the oldest out.
TEST(EventTraceReconstruction, OnlyRecentlyClosedIdsAreFlaggedAsReopened) {
  ReconstructionOptions o;
  o.max_open_traces = 1;  // each late fragment closes when the next opens
  EventFixture f(o);
  constexpr int64_t kTraces = 70000;
  constexpr int64_t kOldestRemembered = kTraces - 65536 + 1;  // 4,465
  for (int64_t t = 1; t <= kTraces; ++t) {
    f.feed.metadata(t);
    f.feed.before(t, 0, t, "a");
    f.feed.after(t, 1, t, "a");
  }
  ASSERT_EQ(f.rec.stats().valid_traces, static_cast<uint64_t>(kTraces));
  f.feed.after(kTraces, 2, kTraces, "a");                // reopened: flagged
  f.feed.metadata(kTraces + 1);                          // closes it: remembered already
  f.feed.after(kOldestRemembered, 2, kTraces, "a");      // still remembered: flagged
  f.feed.after(kOldestRemembered - 1, 2, kTraces, "a");  // forgotten: not flagged
  f.rec.finish();
  EXPECT_EQ(f.rec.stats().reopened_trace_ids, 2u);
  std::map<int64_t, bool> flagged;
  for (const auto& t : f.sink.invalid) {
    flagged[t.trace_id] =
        t.problems.front().detail.find("closed shortly before") != std::string::npos;
  }
  EXPECT_TRUE(flagged.at(kTraces));
  EXPECT_TRUE(flagged.at(kOldestRemembered));
  EXPECT_FALSE(flagged.at(kOldestRemembered - 1));
  EXPECT_FALSE(flagged.at(kTraces + 1));
}

TEST(EventTraceReconstruction, TimeoutClosesIdleTraces) {
  ReconstructionOptions o;
  o.trace_timeout_ns = 1000;
  EventFixture f(o);
  f.feed.metadata(1);
  f.feed.before(1, 0, 100, "stuck");
  f.feed.metadata(2);
  f.feed.before(2, 0, 600, "x");
  f.feed.after(2, 1, 900, "x");
  EXPECT_TRUE(f.sink.invalid.empty());
  f.feed.metadata(3);
  f.feed.before(3, 0, 1200, "y");  // trace 1 idle since 100: timed out
  ASSERT_EQ(f.sink.invalid.size(), 1u);
  EXPECT_EQ(f.sink.invalid[0].trace_id, 1);
  EXPECT_EQ(f.sink.invalid[0].closed_by, CloseCause::kTimeout);
  EXPECT_EQ(f.rec.stats().timed_out_traces, 1u);
  EXPECT_EQ(f.rec.open_traces(), 1u);
}

// ---- Repair ----------------------------------------------------------------

// The reconstructor looks for idle traces only once the oldest open one
// can have timed out; after another trace completes, the oldest one still
// times out at its own deadline, not later.
TEST(EventTraceReconstruction, ATraceTimesOutAtItsOwnDeadlineAfterAnOlderOneCompleted) {
  ReconstructionOptions o;
  o.trace_timeout_ns = 1000;
  EventFixture f(o);
  f.feed.metadata(1);
  f.feed.before(1, 0, 100, "a");
  f.feed.metadata(2);
  f.feed.before(2, 0, 300, "b");  // trace 2 idle from here on
  f.feed.after(1, 1, 400, "a");   // trace 1 completes
  ASSERT_EQ(f.sink.valid.size(), 1u);
  f.feed.metadata(3);
  f.feed.before(3, 0, 1250, "c");  // trace 2 idle for 950: not yet
  EXPECT_TRUE(f.sink.invalid.empty());
  EXPECT_EQ(f.rec.open_traces(), 2u);
  f.feed.before(3, 1, 1350, "d");  // idle for 1050: timed out
  ASSERT_EQ(f.sink.invalid.size(), 1u);
  EXPECT_EQ(f.sink.invalid[0].trace_id, 2);
  EXPECT_EQ(f.sink.invalid[0].closed_by, CloseCause::kTimeout);
  EXPECT_EQ(f.rec.open_traces(), 1u);
}

TEST(EventTraceReconstruction, RepairClosesExecutionsLeftOpenBelowAnAfter) {
  // inner's after event was never written; outer's after closes both.
  for (bool repair : {false, true}) {
    ReconstructionOptions o;
    o.repair_event_traces = repair;
    EventFixture f(o);
    f.feed.metadata(1);
    f.feed.before(1, 0, 0, "outer");
    f.feed.before(1, 1, 10, "inner");
    f.feed.after(1, 2, 50, "outer");
    f.rec.finish();
    if (!repair) {
      ASSERT_EQ(f.sink.invalid.size(), 1u);
      continue;
    }
    ASSERT_EQ(f.sink.valid.size(), 1u);
    const Trace& t = f.sink.valid[0];
    EXPECT_EQ(shape(t), (Shape{"outer@0,0", "inner@1,1"}));
    EXPECT_EQ(t.executions[1].tout, 50);
    EXPECT_TRUE(t.executions[1].repaired);
    EXPECT_FALSE(t.executions[0].repaired);
  }
}

TEST(EventTraceReconstruction, RepairAtEndOfInputUsesTheLatestTimestamp) {
  ReconstructionOptions o;
  o.repair_event_traces = true;
  EventFixture f(o);
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "main");
  f.feed.before(1, 1, 10, "child");
  f.feed.after(1, 2, 30, "child");
  EXPECT_TRUE(f.sink.valid.empty());  // still open until the end of input
  f.rec.finish();
  ASSERT_EQ(f.sink.valid.size(), 1u);
  const Trace& t = f.sink.valid[0];
  EXPECT_EQ(t.executions[0].tout, 30);
  EXPECT_TRUE(t.executions[0].repaired);
}

TEST(EventTraceReconstruction, RepairCannotFillOrderIndexGaps) {
  ReconstructionOptions o;
  o.repair_event_traces = true;
  EventFixture f(o);
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "a");
  f.feed.before(1, 1, 1, "b");
  // b's after (index 2) was lost
  f.feed.after(1, 3, 3, "a");
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kOrderIndexGap);
}

}  // namespace
}  // namespace sonde::analysis
