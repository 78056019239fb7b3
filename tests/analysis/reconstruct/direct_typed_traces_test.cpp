// The reconstructor's direct path for typed traces
// (trace_reconstructor_direct.cpp) against the general path: the same
// random typed streams, well formed and broken in every way the direct
// path must hand over (order gaps, stray and mismatched afters, undefined
// and redefined operations, reused and repeated trace ids, abandoned
// traces, a new source), fed to a reconstructor with the direct path and
// one without, must give the same traces, invalid traces and counts.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_reconstructor.hpp"

namespace sonde::analysis {
namespace {

std::string describe(const Trace& t) {
  std::string s = "trace " + std::to_string(t.trace_id) + " thread " + std::to_string(t.thread_id) +
                  " host " + std::string(t.host) + " session " + std::string(t.session) +
                  " parent " + std::to_string(t.parent_trace_id) + "/" +
                  std::to_string(t.parent_order_id) + " w3c " +
                  std::to_string(t.w3c.trace_id_high) + "." + std::to_string(t.w3c.trace_id_low) +
                  "." + std::to_string(t.w3c.parent_span_id) + " origin " +
                  std::to_string(static_cast<int>(t.origin)) + "\n";
  for (const Execution& x : t.executions) {
    s += "  " + std::string(x.operation) + " [" + std::string(x.component) + "] @" +
         std::string(x.host) + " " + std::to_string(x.tin) + "-" + std::to_string(x.tout) +
         " eoi " + std::to_string(x.eoi) + " ess " + std::to_string(x.ess) + " oi " +
         std::to_string(x.order_index) + "/" + std::to_string(x.exit_order_index) +
         (x.failed ? " failed:" + std::string(x.cause) : "") + (x.repaired ? " repaired" : "") +
         (x.assumed ? " assumed" : "") + (x.call_only ? " call-only" : "") + "\n";
  }
  return s;
}

class Described final : public TraceSink {
 public:
  void on_trace(const Trace& t) override { out.push_back("valid " + describe(t)); }
  void on_invalid_trace(const InvalidTrace& t) override {
    std::string s = "invalid " + std::to_string(t.trace_id) + " by " +
                    std::string(to_string(t.closed_by)) + " records " + std::to_string(t.records) +
                    "\n";
    for (const TraceProblem& p : t.problems) {
      s += "  problem " + std::to_string(static_cast<int>(p.kind)) + " " + p.detail + "\n";
    }
    out.push_back(s + describe(t.partial));
  }
  std::vector<std::string> out;
};

// One thread of a monitored program as KiekerFlowBuilder renders it:
// its current trace id, next order index and open operations.
struct Thread {
  int64_t os_tid = 0;
  int64_t trace = -1;
  int64_t order = 0;
  bool fresh = false;  // started, no event yet
  std::vector<uint32_t> open;
};

// Feeds the same random typed stream to both reconstructors.
class Streams {
 public:
  Streams(TraceReconstructor& a, TraceReconstructor& b)
      : a_(*a.typed_flow()), b_(*b.typed_flow()) {}

  void source() {
    a_.on_source_begin();
    b_.on_source_begin();
  }
  void op(uint32_t id, const std::string& name, const std::string& component) {
    a_.on_operation(id, name, component);
    b_.on_operation(id, name, component);
  }
  void start(const format::TypedTraceStart& s) {
    a_.on_trace_start(s);
    b_.on_trace_start(s);
  }
  void event(const format::TypedOperationEvent& e) {
    a_.on_operation_event(e);
    b_.on_operation_event(e);
  }

 private:
  format::TypedFlowSink& a_;
  format::TypedFlowSink& b_;
};

// A stream of `steps` steps; `mischief` is the chance per step of
// something a monitor writing a whole log would not do.
void random_stream(Streams& s, uint32_t seed, int steps, double mischief) {
  std::mt19937 random(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(random) < p; };
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<uint32_t>(n)); };
  const uint32_t operations = 6;
  auto define_all = [&](const std::string& suffix) {
    for (uint32_t id = 1; id <= operations; ++id) {
      // One without a component: its class comes from the signature.
      s.op(id, "void ns.C" + std::to_string(id % 3) + ".op" + std::to_string(id) + suffix + "()",
           id == 4 ? "" : "ns.C" + std::to_string(id % 3));
    }
  };
  s.source();
  define_all("");
  std::vector<Thread> threads(4);
  for (size_t i = 0; i < threads.size(); ++i) threads[i].os_tid = 100 + static_cast<int64_t>(i);
  int64_t next_trace = 1;
  int64_t time = 1000;
  std::vector<int64_t> used;
  for (int step = 0; step < steps; ++step) {
    Thread& t = threads[static_cast<size_t>(pick(static_cast<int>(threads.size())))];
    time += 1 + pick(50);
    // A finished trace is followed by a new one (or, with mischief, now and
    // then by more events under its id).
    const bool finished = t.open.empty() && !t.fresh && (mischief == 0 || chance(0.8));
    if (t.trace < 0 || finished || chance(mischief * 0.3)) {
      // A new trace (abandoning an open one now and then), sometimes
      // with an id used before or the current one again.
      format::TypedTraceStart st;
      st.timestamp = time;
      st.trace_id = next_trace++;
      if (chance(mischief * 0.2) && !used.empty())
        st.trace_id = used[static_cast<size_t>(pick(static_cast<int>(used.size())))];
      if (chance(mischief * 0.1) && t.trace >= 0) st.trace_id = t.trace;
      st.thread_id = t.os_tid;
      st.session = "<no-session-id>";
      st.host = chance(0.1) ? "other" : "host";
      const bool child = chance(0.2);
      st.parent_trace_id = child ? st.trace_id - 1 : st.trace_id;
      st.parent_order_id = child ? pick(5) : -1;
      if (chance(0.1)) st.w3c = {7, 8, 9};
      s.start(st);
      used.push_back(st.trace_id);
      t.trace = st.trace_id;
      t.order = 0;
      t.fresh = true;
      t.open.clear();
      continue;
    }
    format::TypedOperationEvent e;
    e.timestamp = time;
    e.trace_id = t.trace;
    if (chance(mischief * 0.2)) t.order += 1 + pick(2);          // events lost
    if (chance(mischief * 0.05)) e.trace_id = 100000 + pick(3);  // an unknown trace
    if (chance(mischief * 0.05))
      s.op(static_cast<uint32_t>(1 + pick(static_cast<int>(operations))), "void ns.X.renamed()",
           "ns.X");
    if (chance(mischief * 0.02)) {
      s.source();
      define_all(chance(0.5) ? "" : "2");
    }
    const bool enter =
        t.open.empty() ? !chance(mischief * 0.3) : (t.open.size() < 5 && chance(0.5));
    if (enter) {
      e.kind = format::TypedFlowKind::kBefore;
      e.operation = static_cast<uint32_t>(1 + pick(static_cast<int>(operations)));
      if (chance(mischief * 0.05)) e.operation = 77;  // never defined
      t.open.push_back(e.operation);
    } else {
      e.kind = chance(0.1) ? format::TypedFlowKind::kAfterFailed : format::TypedFlowKind::kAfter;
      e.cause = "boom";
      if (t.open.empty()) {
        e.operation = 1;  // an after with nothing open
      } else {
        e.operation = t.open.back();
        t.open.pop_back();
        if (chance(mischief * 0.1)) e.operation = e.operation % operations + 1;  // mismatched
      }
    }
    e.order_index = t.order++;
    t.fresh = false;
    s.event(e);
  }
}

void expect_same_counts(const ReconstructionStats& a, const ReconstructionStats& b) {
  EXPECT_EQ(a.records, b.records);
  EXPECT_EQ(a.flow_records, b.flow_records);
  EXPECT_EQ(a.valid_traces, b.valid_traces);
  EXPECT_EQ(a.invalid_traces, b.invalid_traces);
  EXPECT_EQ(a.timed_out_traces, b.timed_out_traces);
  EXPECT_EQ(a.evicted_traces, b.evicted_traces);
  EXPECT_EQ(a.reopened_trace_ids, b.reopened_trace_ids);
  EXPECT_EQ(a.peak_open_traces, b.peak_open_traces);
}

struct Pair {
  explicit Pair(ReconstructionOptions options)
      : direct(direct_sink, with(options, true)), general(general_sink, with(options, false)) {}
  static ReconstructionOptions with(ReconstructionOptions o, bool direct) {
    o.direct_typed_traces = direct;
    return o;
  }
  void finish() {
    direct.finish();
    general.finish();
  }
  Described direct_sink, general_sink;
  TraceReconstructor direct, general;
};

TEST(DirectTypedTraces, WellFormedStreamsAreBuiltDirectlyAndAlike) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Pair p{ReconstructionOptions{}};
    Streams s(p.direct, p.general);
    random_stream(s, seed, 3000, 0.0);
    p.finish();
    ASSERT_EQ(p.direct_sink.out, p.general_sink.out) << "seed " << seed;
    expect_same_counts(p.direct.stats(), p.general.stats());
    // Only the traces still open at the end were not built directly.
    EXPECT_GT(p.direct.stats().direct_traces, 0u);
    EXPECT_EQ(p.direct.stats().direct_traces, p.direct.stats().valid_traces) << "seed " << seed;
    EXPECT_EQ(p.general.stats().direct_traces, 0u);
  }
}

TEST(DirectTypedTraces, BrokenStreamsGiveTheGeneralPathsTracesInItsOrder) {
  uint64_t direct = 0, invalid = 0, reopened = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    Pair p{ReconstructionOptions{}};
    Streams s(p.direct, p.general);
    random_stream(s, seed, 2000, 0.2);
    EXPECT_EQ(p.direct.open_traces(), p.general.open_traces()) << "seed " << seed;
    p.finish();
    ASSERT_EQ(p.direct_sink.out, p.general_sink.out) << "seed " << seed;
    expect_same_counts(p.direct.stats(), p.general.stats());
    direct += p.direct.stats().direct_traces;
    invalid += p.direct.stats().invalid_traces;
    reopened += p.direct.stats().reopened_trace_ids;
  }
  // The streams did exercise both paths and the reused ids.
  EXPECT_GT(direct, 0u);
  EXPECT_GT(invalid, 0u);
  EXPECT_GT(reopened, 0u);
}

TEST(DirectTypedTraces, TimeoutsCloseTheSameTracesInTheSameOrder) {
  ReconstructionOptions o;
  o.trace_timeout_ns = 400;  // a few steps of an idle thread
  uint64_t timed_out = 0;
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    Pair p{o};
    Streams s(p.direct, p.general);
    random_stream(s, seed, 2000, seed % 2 == 0 ? 0.2 : 0.0);
    p.finish();
    ASSERT_EQ(p.direct_sink.out, p.general_sink.out) << "seed " << seed;
    expect_same_counts(p.direct.stats(), p.general.stats());
    timed_out += p.direct.stats().timed_out_traces;
  }
  EXPECT_GT(timed_out, 0u);
}

TEST(DirectTypedTraces, TheBoundOnOpenTracesEvictsTheSameTraces) {
  ReconstructionOptions o;
  o.max_open_traces = 2;
  Pair p{o};
  Streams s(p.direct, p.general);
  random_stream(s, 5, 2000, 0.0);
  p.finish();
  EXPECT_EQ(p.direct_sink.out, p.general_sink.out);
  expect_same_counts(p.direct.stats(), p.general.stats());
  EXPECT_GT(p.direct.stats().evicted_traces, 0u);
  EXPECT_LE(p.direct.stats().peak_open_traces, 3u);
}

TEST(DirectTypedTraces, RepairTakesTheGeneralPath) {
  ReconstructionOptions o;
  o.repair_event_traces = true;
  Pair p{o};
  Streams s(p.direct, p.general);
  random_stream(s, 3, 1000, 0.0);
  p.finish();
  EXPECT_EQ(p.direct_sink.out, p.general_sink.out);
  EXPECT_EQ(p.direct.stats().direct_traces, 0u);
}

}  // namespace
}  // namespace sonde::analysis
