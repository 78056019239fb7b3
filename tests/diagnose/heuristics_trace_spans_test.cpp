// The spans of an experiment's traces, read without reconstructing them
// (trace_spans.hpp), must be exactly what a reconstruction gives: on the
// regular logs sonde writes by the fast path, on anything else by falling
// back to the reconstruction.
#include <gtest/gtest.h>

#include <map>

#include "diagnose/heuristics/experiment_traces.hpp"
#include "diagnose/heuristics/trace_spans.hpp"
#include "diagnose_test_support.hpp"
#include "format/byte_sink.hpp"
#include "format/log_reader.hpp"
#include "format/native_writer.hpp"

namespace sonde::diagnose::test {
namespace {

using heuristics::TraceSpan;

constexpr int64_t kBase = 9'000;

ExperimentSpec spec() {
  ExperimentSpec s;
  s.id = "load-u2";
  s.users = 2;
  s.requests = 10;
  s.inter_request_ns = 10 * kMs;
  return s;
}

// Ten requests on two threads as libsonde writes them (native thread
// events): nested calls, a failed call, a child trace handed to a third
// thread; one trace before the stable phase, one never finished. With
// `irregular` 1 one more request's after event names another operation
// than its before, with 2 a request's trace id is used twice.
void native_requests(const std::string& experiment_dir, int irregular = 0) {
  std::filesystem::create_directories(experiment_dir + "/log");
  format::FileSink sink(experiment_dir + "/log/data.sonde");
  ASSERT_TRUE(sink.ok());
  format::NativeWriter w(sink);
  ASSERT_TRUE(w.begin());
  const int64_t origin = kT0 - 100 * kMs;  // tsc 0; the stable phase starts at kT0
  w.clock(0, origin, 1.0);
  for (uint32_t thread = 0; thread < 3; ++thread) w.thread(thread, 101 + thread, "worker");
  const char* ops[] = {"t::handle", "t::query", "t::work", "t::other"};
  for (uint32_t op = 1; op <= 4; ++op)
    w.operation(op, ops[op - 1], format::native::OperationKind::kFunction, "/bin/t", 0, "", 0);
  const uint32_t boom = w.string_id("boom");
  auto ms = [](int64_t at) { return static_cast<uint64_t>(at * kMs); };
  w.begin_events(0, ms(50));  // before the stable phase
  w.trace_begin(ms(50), kBase - 1, -1, -1);
  w.enter(ms(50) + 10, 1);
  w.exit(ms(50) + 20, 1);
  w.end_events();
  for (int i = 0; i < 10; ++i) {
    uint64_t t = ms(100 + i * 10);
    w.begin_events(static_cast<uint32_t>(i % 2), t);
    w.trace_begin(t, static_cast<uint64_t>(kBase + i), -1, -1);
    w.enter(t += 1000, 1);
    for (int k = 0; k <= i % 3; ++k) {
      w.enter(t += 1000, 2);
      if (i == 7 && k == 1)
        w.exit_failed(t += 1000, 2, boom);
      else
        w.exit(t += 1000, 2);
    }
    w.exit(t += 1000, 1);
    w.end_events();
    if (i == 4) {
      w.begin_events(2, t);
      w.trace_begin(t, kBase + 100, kBase + 4, 1);
      w.enter(t += 500, 3);
      w.exit(t += 500, 3);
      w.end_events();
    }
  }
  uint64_t t = ms(220);
  w.begin_events(0, t);
  if (irregular != 0) {
    w.trace_begin(t, static_cast<uint64_t>(irregular == 1 ? kBase + 300 : kBase + 3), -1, -1);
    w.enter(t += 1000, 1);
    w.enter(t += 1000, 2);
    w.exit(t += 1000, irregular == 1 ? 4 : 2);
    w.exit(t += 1000, 1);
  }
  w.trace_begin(t, kBase + 200, -1, -1);  // never finished
  w.enter(t += 1000, 1);
  w.end_events();
  ASSERT_TRUE(w.finish(0, 0));
}

// What a reconstruction gives (for_each_trace reconstructs every trace).
std::map<int64_t, TraceSpan> reconstructed(const Experiment& e) {
  std::map<int64_t, TraceSpan> out;
  const std::string error = heuristics::for_each_trace(e, [&](const analysis::Trace& t) {
    out[t.trace_id] = {t.trace_id,     t.thread_id,  t.parent_trace_id,
                       t.start_time(), t.end_time(), t.executions.size()};
  });
  EXPECT_EQ(error, "");
  return out;
}

bool same(const std::map<int64_t, TraceSpan>& a, const std::map<int64_t, TraceSpan>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [id, x] : a) {
    auto it = b.find(id);
    if (it == b.end()) return false;
    const TraceSpan& y = it->second;
    if (x.thread_id != y.thread_id || x.parent_trace_id != y.parent_trace_id ||
        x.start != y.start || x.end != y.end || x.executions != y.executions)
      return false;
  }
  return true;
}

// Whether the fast path read the log through (no fallback).
bool regular(const std::string& experiment_dir) {
  heuristics::TraceSpanReader reader([](const TraceSpan&) {});
  format::read_log(experiment_dir + "/log", reader);
  return !reader.irregular();
}

TEST(TraceSpans, ARegularLogGivesTheReconstructionsSpansWithoutIt) {
  TempDir d;
  const std::string dir = write_experiment(d.path(), spec());
  native_requests(dir);
  const ExperimentData data = load_experiment_data(d.path());
  const Experiment& e = data.experiments[0];
  EXPECT_TRUE(regular(dir));
  const auto& fast = heuristics::experiment_traces(e);
  EXPECT_EQ(fast.error, "");
  // Ten requests and the child; not the early trace, not the unfinished one.
  EXPECT_EQ(fast.traces.size(), 11u);
  EXPECT_EQ(fast.traces.at(kBase + 100).parent_trace_id, kBase + 4);
  EXPECT_EQ(fast.traces.at(kBase + 8).executions, 4u);  // handle and three queries
  EXPECT_EQ(fast.traces.at(kBase + 1).thread_id, 102);
  std::map<int64_t, TraceSpan> in_phase;
  for (const auto& [id, s] : reconstructed(e))
    if (s.start >= e.start_ns && s.start <= e.end_ns) in_phase[id] = s;
  EXPECT_TRUE(same(fast.traces, in_phase));
}

TEST(TraceSpans, AnIrregularLogIsReconstructedInstead) {
  // 1: a mismatched after event; 2: a trace id used twice; 3: flow events
  // as generic records (a Kieker log, or sonde's own record writer).
  for (int variant = 1; variant <= 3; ++variant) {
    TempDir d;
    const std::string dir = write_experiment(d.path(), spec());
    if (variant < 3) {
      native_requests(dir, variant);
    } else {
      write_log(dir, [](format::RecordSink& sink) {
        for (int i = 0; i < 10; ++i) {
          TraceWriter t(sink, kBase + i, kT0 + i * 10 * kMs);
          t.enter("t::handle");
          t.enter("t::query");
          t.leave("t::query");
          t.leave("t::handle");
        }
      });
    }
    EXPECT_FALSE(regular(dir)) << variant;
    const ExperimentData data = load_experiment_data(d.path());
    const Experiment& e = data.experiments[0];
    const auto& traces = heuristics::experiment_traces(e);
    EXPECT_EQ(traces.error, "");
    EXPECT_GE(traces.traces.size(), 10u) << variant;
    std::map<int64_t, TraceSpan> in_phase;
    for (const auto& [id, s] : reconstructed(e))
      if (s.start >= e.start_ns && s.start <= e.end_ns) in_phase[id] = s;
    EXPECT_TRUE(same(traces.traces, in_phase)) << variant;
  }
}

}  // namespace
}  // namespace sonde::diagnose::test
