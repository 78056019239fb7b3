// Flow-event traces with CallOperationEvents, reconstructed as Kieker's
// TraceEventRecords2ExecutionAndMessageTrace filter does
// (docs/formats/kieker-call-events.md). The first six cases are the event
// sequences of Kieker's own filter tests (BookstoreEventRecordFactory), with
// the executions those tests expect; the rest are the other cases the rules
// cover. Operations: sB (Bookstore.searchBook), gB (Catalog.getBook), gO
// (CRM.getOrders, not instrumented where only its call appears).
#include <gtest/gtest.h>

#include "analysis/kieker/kieker_system_model.hpp"
#include "analysis/kieker/kieker_trace.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

using testing::CollectingSink;
using testing::RecordFeeder;
using Timed = std::vector<std::string>;

using CallFixture = testing::FedReconstructor;

// "op@eoi,ess tin-tout" and " assumed" when no call event proves the call.
Timed timed(const Trace& t) {
  Timed out;
  for (const Execution& e : t.executions) {
    out.push_back(std::string(e.operation) + "@" + std::to_string(e.eoi) + "," +
                  std::to_string(e.ess) + " " + std::to_string(e.tin) + "-" +
                  std::to_string(e.tout) + (e.assumed ? " assumed" : ""));
  }
  return out;
}

const Trace& only_valid(CallFixture& f) {
  f.rec.finish();
  EXPECT_TRUE(f.sink.invalid.empty())
      << (f.sink.invalid.empty() ? "" : f.sink.invalid[0].problems.front().detail);
  EXPECT_EQ(f.sink.valid.size(), 1u);
  return f.sink.valid.at(0);
}

// ---- Kieker's test traces ---------------------------------------------------

// validSyncTraceAdditionalCallEventsGap: CRM is not instrumented; its call
// of getBook is recorded, and getBook's events follow that call.
TEST(CallEventReconstruction, AnUninstrumentedCalleeBetweenTwoInstrumentedOnes) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 1, "sB", "gB", "B", "C");
  f.feed.before(1, 2, 2, "gB", "C");
  f.feed.after(1, 3, 3, "gB", "C");
  f.feed.call(1, 4, 4, "sB", "gO", "B", "R");
  f.feed.call(1, 5, 6, "gO", "gB", "R", "C");
  f.feed.before(1, 6, 7, "gB", "C");
  f.feed.after(1, 7, 8, "gB", "C");
  f.feed.after(1, 8, 11, "sB", "B");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"sB@0,0 0-11", "gB@1,1 2-3", "gO@2,1 4-11 assumed", "gB@3,2 7-8"}));
  EXPECT_EQ(t.executions[2].component, "R");
  EXPECT_EQ(t.executions[2].host, "host");
}

// validSyncTraceSimpleEntryCallExit: a call whose callee records nothing
// lasts until its caller returns.
TEST(CallEventReconstruction, ACallWithoutItsCalleesEventsEndsWithTheCaller) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 1, "sB", "gB", "B", "C");
  f.feed.after(1, 2, 11, "sB", "B");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"sB@0,0 0-11", "gB@1,1 1-11 assumed"}));
}

// validSyncTraceSimpleEntryCallReturnCallCallExit: the caller's next call
// ends the previous one; a SplitEvent between them only takes its index.
TEST(CallEventReconstruction, TheCallersNextCallEndsItsPreviousOne) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 1, "sB", "gB", "B", "C");
  f.feed.split(1, 2, 6);
  f.feed.call(1, 3, 4, "sB", "gO", "B", "R");
  f.feed.after(1, 4, 11, "sB", "B");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"sB@0,0 0-11", "gB@1,1 1-4 assumed", "gO@2,1 4-11 assumed"}));
}

// validSyncTraceSimpleEntryCallCallExit: a call made by an uninstrumented
// callee nests under it; the caller's return ends both.
TEST(CallEventReconstruction, ACallFromAnUninstrumentedCalleeNestsUnderIt) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 4, "sB", "gO", "B", "R");
  f.feed.call(1, 2, 6, "gO", "gB", "R", "C");
  f.feed.after(1, 3, 11, "sB", "B");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"sB@0,0 0-11", "gO@1,1 4-11 assumed", "gB@2,2 6-11 assumed"}));
}

// validSyncTraceSimpleCallCall: the trace begins with a call from an
// uninstrumented caller, which makes no execution; calls open at the end
// close at the newest one's time. Such a trace is complete only at the end
// of input (Kieker: the same).
TEST(CallEventReconstruction, ATraceOfCallsOnlyStartsAtTheFirstCallee) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.call(1, 0, 4, "sB", "gO", "B", "R");
  f.feed.call(1, 1, 6, "gO", "gB", "R", "C");
  EXPECT_TRUE(f.sink.valid.empty());
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"gO@0,0 4-6 assumed", "gB@1,1 6-6 assumed"}));
}

// validSyncTraceBeforeAfterEvents and ...AdditionalCallEvents: without call
// events every execution below the root is assumed; with them none is.
TEST(CallEventReconstruction, CallEventsMakeTheirCalleesCertain) {
  CallFixture without, with;
  without.feed.metadata(1);
  with.feed.metadata(1);
  without.feed.before(1, 0, 0, "sB", "B");
  without.feed.before(1, 1, 1, "gB", "C");
  without.feed.after(1, 2, 2, "gB", "C");
  without.feed.after(1, 3, 3, "sB", "B");
  with.feed.before(1, 0, 0, "sB", "B");
  with.feed.call(1, 1, 1, "sB", "gB", "B", "C");
  with.feed.before(1, 2, 2, "gB", "C");
  with.feed.after(1, 3, 3, "gB", "C");
  with.feed.after(1, 4, 4, "sB", "B");
  EXPECT_EQ(timed(only_valid(without)), (Timed{"sB@0,0 0-3", "gB@1,1 1-2 assumed"}));
  // The callee's times are its own events', not the call's.
  EXPECT_EQ(timed(only_valid(with)), (Timed{"sB@0,0 0-4", "gB@1,1 2-3"}));
}

// ---- The other cases ----------------------------------------------------------

TEST(CallEventReconstruction, ASingleCallIsOneAssumedExecution) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.call(1, 0, 5, "main", "helper");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"helper@0,0 5-5 assumed"}));
}

TEST(CallEventReconstruction, ATraceStartingWithACallToAnInstrumentedCallee) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.call(1, 0, 1, "main", "handle");
  f.feed.before(1, 1, 2, "handle");
  f.feed.after(1, 2, 9, "handle");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"handle@0,0 2-9"}));
}

// Two calls of the uninstrumented caller: two roots, as Kieker's message
// trace returns to $root and calls from it again.
TEST(CallEventReconstruction, TwoCallsOfAnUninstrumentedCallerAreTwoRoots) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.call(1, 0, 1, "main", "a");
  f.feed.call(1, 1, 3, "main", "b");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"a@0,0 1-3 assumed", "b@1,0 3-3 assumed"}));
}

// A before that is not the event right after its call (a SplitEvent came
// between) is not that call's callee: it nests under the open call, and
// the call is its own assumed execution (Kieker: the same).
TEST(CallEventReconstruction, ACalleeNotRightAfterItsCallIsNotMatched) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 1, "sB", "gB", "B", "C");
  f.feed.split(1, 2, 2);
  f.feed.before(1, 3, 3, "gB", "C");
  f.feed.after(1, 4, 4, "gB", "C");
  f.feed.after(1, 5, 5, "sB", "B");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"sB@0,0 0-5", "gB@1,1 1-5 assumed", "gB@2,2 3-4 assumed"}));
}

// The call names the declared type's signature, the before the runtime
// class's: Kieker's enhanced call detection matches them by everything but
// the class part, when the callee class signatures agree.
TEST(CallEventReconstruction, ACallMatchesItsCalleeApartFromTheSignaturesClass) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "public void app.Main.run()", "app.Main");
  f.feed.call(1, 1, 1, "public void app.Main.run()", "public int app.Store.size()", "app.Main",
              "app.MemoryStore");
  f.feed.before(1, 2, 2, "public int app.MemoryStore.size()", "app.MemoryStore");
  f.feed.after(1, 3, 3, "public int app.MemoryStore.size()", "app.MemoryStore");
  f.feed.after(1, 4, 4, "public void app.Main.run()", "app.Main");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"public void app.Main.run()@0,0 0-4",
                             "public int app.MemoryStore.size()@1,1 2-3"}));
}

// A constructor's before event matches only a constructor call; an
// operation call before it stays open as an assumed execution.
TEST(CallEventReconstruction, AConstructorsBeforeEventNeedsAConstructorCall) {
  CallFixture ctor_call, op_call;
  for (CallFixture* f : {&ctor_call, &op_call}) {
    f->feed.metadata(1);
    f->feed.before(1, 0, 0, "main");
    f->feed.call(1, 1, 1, "main", "Obj", "C", "C", /*constructor=*/f == &ctor_call);
    f->feed.before_constructor(1, 2, 2, "Obj");
    f->feed.after_constructor(1, 3, 3, "Obj");
    f->feed.after(1, 4, 4, "main");
  }
  EXPECT_EQ(timed(only_valid(ctor_call)), (Timed{"main@0,0 0-4", "Obj@1,1 2-3"}));
  EXPECT_EQ(timed(only_valid(op_call)),
            (Timed{"main@0,0 0-4", "Obj@1,1 1-4 assumed", "Obj@2,2 2-3 assumed"}));
}

// The caller's own before event (recursion through an uninstrumented
// function) ends the call it made: the new execution is the call's sibling.
TEST(CallEventReconstruction, TheCallersNextBeforeEventEndsItsOpenCall) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "a");
  f.feed.call(1, 1, 1, "a", "x");
  f.feed.before(1, 2, 2, "a");
  f.feed.after(1, 3, 3, "a");
  f.feed.after(1, 4, 4, "a");
  const Trace& t = only_valid(f);
  EXPECT_EQ(timed(t), (Timed{"a@0,0 0-4", "x@1,1 1-2 assumed", "a@2,1 2-3 assumed"}));
}

// A call by an operation that is not running leaves the caller's after
// event facing an open call: the trace is invalid, as in Kieker.
TEST(CallEventReconstruction, ACallByAnotherCallerMakesTheAfterEventMismatch) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "a");
  f.feed.call(1, 1, 1, "x", "b");
  f.feed.after(1, 2, 2, "a");
  f.rec.finish();
  const InvalidTrace& t = testing::only_invalid(f.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kMismatchedAfterEvent);
  EXPECT_NE(t.problems.front().detail.find("a call of op b is open"), std::string::npos)
      << t.problems.front().detail;
}

// A before left open is still a missing after event; with repair it and
// the call below it close at the trace's latest time.
TEST(CallEventReconstruction, ABeforeLeftOpenAfterACallIsMissingOrRepaired) {
  ReconstructionOptions repair;
  repair.repair_event_traces = true;
  CallFixture plain, repaired(repair);
  for (CallFixture* f : {&plain, &repaired}) {
    f->feed.metadata(1);
    f->feed.before(1, 0, 0, "a");
    f->feed.call(1, 1, 1, "a", "b");
    f->feed.before(1, 2, 2, "b");
    f->feed.after(1, 3, 7, "a");  // b's after event never came
    f->rec.finish();
  }
  const InvalidTrace& t = testing::only_invalid(plain.sink);
  EXPECT_EQ(t.problems.front().kind, TraceProblemKind::kMismatchedAfterEvent);
  ASSERT_EQ(repaired.sink.valid.size(), 1u);
  const Trace& r = repaired.sink.valid[0];
  EXPECT_EQ(timed(r), (Timed{"a@0,0 0-7", "b@1,1 2-7"}));
  EXPECT_TRUE(r.executions[1].repaired);
}

// Kieker's outputs mark the assumed executions; --ignore-assumed-calls
// (KiekerTraceOptions) treats them as certain.
TEST(CallEventReconstruction, KiekerOutputsMarkAssumedCallsUnlessIgnored) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 1, "sB", "gB", "B", "C");
  f.feed.before(1, 2, 2, "gB", "C");
  f.feed.after(1, 3, 3, "gB", "C");
  f.feed.call(1, 4, 4, "sB", "gO", "B", "R");
  f.feed.after(1, 5, 11, "sB", "B");
  const Trace& t = only_valid(f);
  KiekerSystemModel model;
  const KiekerTrace k = resolve_kieker_trace(t, model);
  ASSERT_EQ(k.executions.size(), 3u);
  EXPECT_FALSE(k.executions[0].assumed);
  EXPECT_FALSE(k.executions[1].assumed);
  EXPECT_TRUE(k.executions[2].assumed);
  KiekerSystemModel model2;
  KiekerTraceOptions ignore;
  ignore.ignore_assumed_calls = true;
  const KiekerTrace all = resolve_kieker_trace(t, model2, ignore);
  for (const KiekerExecution& e : all.executions) EXPECT_FALSE(e.assumed);
}

// Kieker numbers components as its filter finishes executions: the calls
// one event closes outermost first, then the caller (validSyncTraceSimple-
// EntryCallCallExit: CRM, Catalog, Bookstore), not in return order.
TEST(CallEventReconstruction, KiekerNumbersComponentsAsItsFilterFinishesExecutions) {
  CallFixture f;
  f.feed.metadata(1);
  f.feed.before(1, 0, 0, "sB", "B");
  f.feed.call(1, 1, 4, "sB", "gO", "B", "R");
  f.feed.call(1, 2, 6, "gO", "gB", "R", "C");
  f.feed.after(1, 3, 11, "sB", "B");
  const Trace& t = only_valid(f);
  KiekerSystemModel model;
  const KiekerTrace k = resolve_kieker_trace(t, model);
  ASSERT_EQ(k.executions.size(), 3u);
  EXPECT_EQ(model.component_type(k.executions[1].ids.assembly), "R");
  EXPECT_EQ(k.executions[1].ids.assembly, 1);
  EXPECT_EQ(k.executions[2].ids.assembly, 2);  // C
  EXPECT_EQ(k.executions[0].ids.assembly, 3);  // B
}

}  // namespace
}  // namespace sonde::analysis
