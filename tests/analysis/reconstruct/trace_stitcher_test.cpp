// TraceStitcher on hand-built traces: children before and after their
// parents, chains, orphans, cycles, timeouts, eviction, invalid traces, and
// the mapping of a parentOrderId to the parent's execution.
#include "analysis/reconstruct/trace_stitcher.hpp"

#include <gtest/gtest.h>

#include "analysis/model/execution_lookup.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "reconstruct/trace_builders.hpp"
#include "record_fixtures.hpp"

namespace sonde::analysis {
namespace {

using testing::flow_trace;

class Collector : public StitchedTraceSink, public TraceSink {
 public:
  void on_stitched_trace(const StitchedTrace& t) override { stitched.push_back(t); }
  void on_trace(const Trace&) override {}
  void on_invalid_trace(const InvalidTrace& t) override { invalid.push_back(t.trace_id); }
  std::vector<StitchedTrace> stitched;
  std::vector<int64_t> invalid;
};

StitchingOptions wait_for_end() {
  StitchingOptions o;
  o.child_timeout_ns = 0;
  return o;
}

// "id<-parent@execution" per part, for compact expectations.
std::vector<std::string> links(const StitchedTrace& t) {
  std::vector<std::string> out;
  for (const SubTrace& p : t.parts) {
    std::string s = std::to_string(p.trace.trace_id);
    if (p.parent >= 0) {
      s += "<-" + std::to_string(t.parts[static_cast<size_t>(p.parent)].trace.trace_id) + "@" +
           std::to_string(p.parent_execution);
    }
    out.push_back(s);
  }
  return out;
}
using Links = std::vector<std::string>;

TEST(ExecutionLookup, MapsOrderIndexesToTheCurrentExecution) {
  // main(a() b()): B0 main, B1 a, A2 a, B3 b, A4 b, A5 main.
  Trace t = flow_trace(1, "main(a()b())");
  ExecutionLookup lookup(t);
  ASSERT_TRUE(lookup.has_order_indexes());
  EXPECT_EQ(lookup.current_at_order_index(0), 0);
  EXPECT_EQ(lookup.current_at_order_index(1), 1) << "a's before event";
  EXPECT_EQ(lookup.current_at_order_index(2), 0) << "a returned: main is current";
  EXPECT_EQ(lookup.current_at_order_index(3), 2);
  EXPECT_EQ(lookup.current_at_order_index(4), 0);
  EXPECT_EQ(lookup.current_at_order_index(5), -1) << "main returned: nothing is current";
  EXPECT_EQ(lookup.current_at_order_index(-1), -1);
  EXPECT_EQ(lookup.current_at_order_index(99), -1);
  EXPECT_EQ(lookup.parent(2), 0);
  EXPECT_EQ(lookup.innermost_at_time(15), 1);
  EXPECT_EQ(lookup.innermost_at_time(25), 0);
  EXPECT_EQ(lookup.innermost_at_time(1000), 0) << "outside every execution: the root";
}

TEST(ExecutionLookup, ExecutionRecordTracesHaveNoOrderIndexes) {
  Trace t = flow_trace(1, "main(a())");
  for (Execution& x : t.executions) x.order_index = x.exit_order_index = -1;
  ExecutionLookup lookup(t);
  EXPECT_FALSE(lookup.has_order_indexes());
  EXPECT_EQ(lookup.current_at_order_index(0), -1);
  EXPECT_EQ(lookup.innermost_at_time(15), 1);
}

TEST(TraceStitcher, LonelyTraceIsOnePart) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(1, "main()"));
  EXPECT_TRUE(out.stitched.empty()) << "held until no child can come";
  s.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"1"}));
  EXPECT_EQ(s.stats().groups, 1u);
  EXPECT_EQ(s.stats().parts_stitched, 0u);
  EXPECT_EQ(s.stats().orphans, 0u);
}

TEST(TraceStitcher, ChildBeforeParentAsFromAHelperThread) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(2, "helper()", 5, 1, 2));  // captured after a returned
  s.on_trace(flow_trace(1, "main(a()b())"));
  s.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"1", "2<-1@0"}));
  EXPECT_EQ(s.stats().parts_stitched, 1u);
  EXPECT_EQ(s.stats().peak_open_groups, 1u) << "the child joined on arrival of its parent";
}

TEST(TraceStitcher, ChainsInAnyOrder) {
  const std::vector<std::vector<int>> orders = {{1, 2, 3}, {3, 2, 1}, {2, 3, 1}, {3, 1, 2}};
  for (const auto& order : orders) {
    Collector out;
    TraceStitcher s(out, wait_for_end());
    for (int id : order) {
      if (id == 1) s.on_trace(flow_trace(1, "main(a())"));
      if (id == 2) s.on_trace(flow_trace(2, "child(x())", 10, 1, 1));
      if (id == 3) s.on_trace(flow_trace(3, "grandchild()", 20, 2, 1));
    }
    s.finish();
    ASSERT_EQ(out.stitched.size(), 1u);
    EXPECT_EQ(links(out.stitched[0]), (Links{"1", "2<-1@1", "3<-2@1"}));
    EXPECT_EQ(s.stats().parts_stitched, 2u);
  }
}

TEST(TraceStitcher, SiblingsInStartOrder) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(3, "late()", 30, 1, 0));
  s.on_trace(flow_trace(2, "early()", 20, 1, 0));
  s.on_trace(flow_trace(1, "main()"));
  s.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"1", "2<-1@0", "3<-1@0"}));
}

TEST(TraceStitcher, OrphanBecomesRootAndKeepsItsParentLink) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(2, "server()", 0, 99, 4));  // parent in another process's log
  s.on_trace(flow_trace(3, "worker()", 5, 2, 0));
  s.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"2", "3<-2@0"}));
  EXPECT_EQ(out.stitched[0].parts[0].trace.parent_trace_id, 99);
  EXPECT_EQ(s.stats().orphans, 1u);
}

TEST(TraceStitcher, CycleIsBrokenNotFollowed) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(1, "a()", 0, 2, 0));
  s.on_trace(flow_trace(2, "b()", 0, 1, 0));
  s.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"2", "1<-2@0"}));
  EXPECT_EQ(s.stats().cyclic_links, 1u);
}

TEST(TraceStitcher, UnresolvableParentPositionIsCounted) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(1, "main()"));
  s.on_trace(flow_trace(2, "child()", 0, 1, 17));
  s.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"1", "2<-1@-1"}));
  EXPECT_EQ(s.stats().unresolved_parent_positions, 1u);
}

TEST(TraceStitcher, TimeoutHandsGroupsOnAndLateChildrenBecomeOrphans) {
  Collector out;
  StitchingOptions o;
  o.child_timeout_ns = 100;
  TraceStitcher s(out, o);
  s.on_trace(flow_trace(1, "main()", 0));  // exits at 10
  s.on_trace(flow_trace(5, "other()", 50));
  EXPECT_TRUE(out.stitched.empty());
  s.on_trace(flow_trace(6, "later()", 1000));  // clock 1010: 1 and 5 expire
  ASSERT_EQ(out.stitched.size(), 2u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"1"}));
  EXPECT_EQ(s.stats().timed_out_groups, 2u);
  s.on_trace(flow_trace(2, "child()", 1001, 1, 0));  // its parent is gone
  s.finish();
  ASSERT_EQ(out.stitched.size(), 4u);
  EXPECT_EQ(s.stats().late_children, 1u);
  EXPECT_EQ(s.stats().orphans, 1u);
  EXPECT_EQ(s.open_groups(), 0u);
}

TEST(TraceStitcher, MaxOpenGroupsEvictsTheOldest) {
  Collector out;
  StitchingOptions o = wait_for_end();
  o.max_open_groups = 2;
  TraceStitcher s(out, o);
  s.on_trace(flow_trace(1, "a()", 0));
  s.on_trace(flow_trace(2, "b()", 100));
  s.on_trace(flow_trace(3, "c()", 200));
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(out.stitched[0].parts[0].trace.trace_id, 1);
  EXPECT_EQ(s.stats().evicted_groups, 1u);
  EXPECT_EQ(s.stats().peak_open_groups, 2u);
  s.finish();
  EXPECT_EQ(out.stitched.size(), 3u);
}

TEST(TraceStitcher, InvalidTracesPassThroughAndTheirChildrenAreOrphans) {
  Collector out;
  TraceStitcher s(out, wait_for_end(), &out);
  s.on_trace(flow_trace(2, "child()", 0, 1, 0));
  InvalidTrace bad;
  bad.trace_id = 1;
  s.on_invalid_trace(bad);
  s.finish();
  EXPECT_EQ(out.invalid, (std::vector<int64_t>{1}));
  ASSERT_EQ(out.stitched.size(), 1u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"2"}));
  EXPECT_EQ(s.stats().invalid_traces, 1u);
  EXPECT_EQ(s.stats().orphans, 1u);
}

TEST(TraceStitcher, DuplicateTraceIdGetsNoChildren) {
  Collector out;
  TraceStitcher s(out, wait_for_end());
  s.on_trace(flow_trace(1, "first()", 0));
  s.on_trace(flow_trace(1, "second()", 100));
  s.on_trace(flow_trace(2, "child()", 5, 1, 0));
  s.finish();
  ASSERT_EQ(out.stitched.size(), 2u);
  EXPECT_EQ(links(out.stitched[0]), (Links{"1", "2<-1@0"}));
  EXPECT_EQ(out.stitched[0].parts[0].trace.executions[0].operation, "first");
  EXPECT_EQ(s.stats().duplicate_trace_ids, 1u);
}

TEST(TraceStitcher, ReconstructedExecutionsCarryTheirOrderIndexes) {
  // Records as a log holds them: the child (another thread) closes first.
  Collector out;
  TraceStitcher stitcher(out, wait_for_end());
  TraceReconstructor rec(stitcher);
  testing::RecordFeeder feed(rec);
  feed.metadata(1);
  feed.before(1, 0, 100, "main");
  feed.before(1, 1, 110, "a");
  feed.after(1, 2, 120, "a");
  format::Record child;
  child.schema = format::find_builtin_schema(format::kieker_class::kTraceMetadata);
  child.values = {
      int64_t{2}, int64_t{9}, std::string_view("<no-session-id>"), std::string_view("host"),
      int64_t{1}, int64_t{2}};
  rec.on_record(child);
  feed.before(2, 0, 125, "helper");
  feed.after(2, 1, 130, "helper");
  feed.after(1, 3, 200, "main");
  rec.finish();
  stitcher.finish();
  ASSERT_EQ(out.stitched.size(), 1u);
  const StitchedTrace& t = out.stitched[0];
  EXPECT_EQ(links(t), (Links{"1", "2<-1@0"})) << "index 2 closed a: main is current";
  const Execution& a = t.parts[0].trace.executions[1];
  EXPECT_EQ(a.order_index, 1);
  EXPECT_EQ(a.exit_order_index, 2);
  EXPECT_EQ(t.parts[0].trace.executions[0].exit_order_index, 3);
}

}  // namespace
}  // namespace sonde::analysis
