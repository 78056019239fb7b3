// Trace reduction (analysis/trace_reducer.hpp): every valid trace is
// counted in exactly one reduced trace, shapes differ by operation, depth
// and host, windows and the shape bound close as documented, and invalid
// traces pass through one by one.
#include "analysis/reconstruct/trace_reducer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sonde::analysis {
namespace {

struct CollectReduced : ReducedTraceSink, TraceSink {
  void on_reduced_trace(const ReducedTrace& r) override { reduced.push_back(r); }
  void on_trace(const Trace&) override { ++valid; }
  void on_invalid_trace(const InvalidTrace& t) override { invalid_ids.push_back(t.trace_id); }
  uint64_t total() const {
    uint64_t n = 0;
    for (const ReducedTrace& r : reduced) n += r.traces;
    return n;
  }
  std::vector<ReducedTrace> reduced;
  std::vector<int64_t> invalid_ids;
  uint64_t valid = 0;
};

// A root call with one child per name in `children`, all at depth 1; the
// root takes `duration` ns and starts at `start`.
Trace reducer_trace(int64_t id, int64_t start, int64_t duration,
                    const std::vector<std::string_view>& children, std::string_view host = "h1",
                    int32_t child_depth = 1) {
  Trace t;
  t.trace_id = id;
  t.host = host;
  Execution root;
  root.operation = "main()";
  root.host = host;
  root.tin = start;
  root.tout = start + duration;
  t.executions.push_back(root);
  int32_t eoi = 1;
  for (std::string_view c : children) {
    Execution e;
    e.operation = c;
    e.host = host;
    e.eoi = eoi++;
    e.ess = child_depth;
    e.tin = start + 10;
    e.tout = start + 10 + duration / 2;
    t.executions.push_back(e);
  }
  return t;
}

TEST(TraceReducer, SameShapesMergeWithExactCountsAndTimes) {
  CollectReduced out;
  TraceReducer reducer(out, out);
  const int per_shape = 100;
  int64_t id = 0, start = 0;
  for (int i = 0; i < per_shape; ++i) {
    // Three shapes, interleaved; durations 1000 + i and 2000 + 2i.
    reducer.on_trace(reducer_trace(++id, start += 1000, 1000 + i, {"a()"}));
    reducer.on_trace(reducer_trace(++id, start += 1000, 2000 + 2 * i, {"a()", "b()"}));
    reducer.on_trace(reducer_trace(++id, start += 1000, 500, {"b()"}));
  }
  reducer.flush();
  ASSERT_EQ(out.reduced.size(), 3u);
  EXPECT_EQ(reducer.traces_in(), 3u * per_shape);
  EXPECT_EQ(out.total(), reducer.traces_in());
  EXPECT_EQ(reducer.reduced_out(), 3u);
  // In order of first start: the shapes as first seen.
  const ReducedTrace& a = out.reduced[0];
  EXPECT_EQ(a.first_trace_id, 1);
  EXPECT_EQ(a.traces, static_cast<uint64_t>(per_shape));
  EXPECT_EQ(a.min_duration, 1000);
  EXPECT_EQ(a.max_duration, 1000 + per_shape - 1);
  EXPECT_DOUBLE_EQ(a.mean_duration, 1000 + (per_shape - 1) / 2.0);
  ASSERT_EQ(a.executions.size(), 2u);
  EXPECT_EQ(a.executions[1].operation, "a()");
  EXPECT_DOUBLE_EQ(a.executions[1].mean_offset, 10);
  const ReducedTrace& ab = out.reduced[1];
  EXPECT_EQ(ab.executions.size(), 3u);
  EXPECT_EQ(ab.max_duration, 2000 + 2 * (per_shape - 1));
  EXPECT_EQ(ab.executions[2].min_duration, 1000);  // half the root's shortest
  EXPECT_EQ(out.reduced[2].traces, static_cast<uint64_t>(per_shape));
  EXPECT_EQ(out.valid, 0u);  // valid traces are not passed through
}

TEST(TraceReducer, DepthAndHostAreTheShapeToo) {
  CollectReduced out;
  TraceReducer reducer(out, out);
  reducer.on_trace(reducer_trace(1, 100, 50, {"a()"}));
  reducer.on_trace(reducer_trace(2, 200, 50, {"a()"}, "h2"));
  reducer.on_trace(reducer_trace(3, 300, 50, {"a()"}, "h1", 2));
  reducer.on_trace(reducer_trace(4, 400, 50, {"a()"}));
  reducer.flush();
  ASSERT_EQ(out.reduced.size(), 3u);
  EXPECT_EQ(out.reduced[0].traces, 2u);
  EXPECT_EQ(out.reduced[1].host, "h2");
  EXPECT_EQ(out.reduced[2].executions[1].ess, 2);
}

TEST(TraceReducer, WindowsCloseOnLogTimeAndTheShapeBound) {
  CollectReduced out;
  ReductionOptions o;
  o.window_ns = 10'000;
  o.max_shapes = 2;
  TraceReducer reducer(out, out, o);
  // 25 traces of one shape 1,000 ns apart: windows of 10 start at 0, 10,000, 20,000.
  for (int i = 0; i < 25; ++i) reducer.on_trace(reducer_trace(i, 1000 * i, 100, {"a()"}));
  reducer.flush();
  ASSERT_EQ(out.reduced.size(), 3u);
  EXPECT_EQ(out.reduced[0].traces, 10u);
  EXPECT_EQ(out.reduced[1].traces, 10u);
  EXPECT_EQ(out.reduced[2].traces, 5u);
  EXPECT_EQ(out.reduced[1].first_start, 10'000);
  EXPECT_EQ(out.reduced[1].last_start, 19'000);

  // Three shapes within one window, at most two kept: the third closes it.
  out.reduced.clear();
  reducer.on_trace(reducer_trace(100, 50'000, 10, {"a()"}));
  reducer.on_trace(reducer_trace(101, 50'001, 10, {"b()"}));
  reducer.on_trace(reducer_trace(102, 50'002, 10, {"a()"}));  // known shape: same window
  reducer.on_trace(reducer_trace(103, 50'003, 10, {"c()"}));
  reducer.flush();
  ASSERT_EQ(out.reduced.size(), 3u);
  EXPECT_EQ(out.reduced[0].traces, 2u);
  EXPECT_EQ(out.reduced[2].first_trace_id, 103);
  EXPECT_EQ(out.total(), reducer.traces_in() - 25);
}

TEST(TraceReducer, InvalidTracesPassThroughOneByOneAndFailuresAreCounted) {
  CollectReduced out;
  TraceReducer reducer(out, out);
  for (int64_t id : {7, 8}) {
    InvalidTrace bad;
    bad.trace_id = id;
    reducer.on_invalid_trace(bad);
  }
  Trace failing = reducer_trace(1, 100, 50, {"a()", "b()"});
  failing.executions[2].failed = true;
  reducer.on_trace(failing);
  reducer.on_trace(reducer_trace(2, 200, 50, {"a()", "b()"}));
  reducer.flush();
  EXPECT_EQ(out.invalid_ids, (std::vector<int64_t>{7, 8}));
  ASSERT_EQ(out.reduced.size(), 1u);
  EXPECT_EQ(out.reduced[0].failed_traces, 1u);
  EXPECT_EQ(out.reduced[0].executions[2].failed, 1u);
  EXPECT_EQ(out.reduced[0].executions[1].failed, 0u);
  // A flush with nothing open emits nothing.
  reducer.flush();
  EXPECT_EQ(out.reduced.size(), 1u);
}

}  // namespace
}  // namespace sonde::analysis
