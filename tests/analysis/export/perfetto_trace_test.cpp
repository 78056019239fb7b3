// The Perfetto protobuf writer: every packet of its output is decoded here
// (a wire-format reader of a few lines) and checked against the traces
// written: tracks, balanced and ordered slices, interning, flows, counters.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/export/export_support.hpp"
#include "analysis/export/perfetto_trace_writer.hpp"
#include "analysis/export/trace_export.hpp"
#include "export_fixtures.hpp"
#include "format/byte_sink.hpp"
#include "format/native_writer.hpp"
#include "format/schema.hpp"
#include "protobuf_test_decode.hpp"

namespace sonde::analysis::test {
namespace {

using Field = ::sonde::test::ProtoField;
inline std::vector<Field> decode(std::string_view msg) { return ::sonde::test::proto_decode(msg); }
inline std::vector<Field> all(const std::vector<Field>& f, uint32_t n) {
  return ::sonde::test::proto_all(f, n);
}
inline const Field* first(const std::vector<Field>& f, uint32_t n) {
  return ::sonde::test::proto_first(f, n);
}

struct Slice {
  uint64_t track = 0;
  std::string name;
  uint64_t begin = 0, end = 0;
  std::map<std::string, std::string> args;  // annotation name -> value as text
  std::vector<uint64_t> flows_out, flows_in;
};

struct Instant {
  uint64_t track = 0;
  uint64_t time = 0;
  std::string name;
  std::map<std::string, std::string> args;
};

// What a viewer makes of the file: tracks, slices (begin matched with end
// per track), counters, instants. Checks the sequence rules while reading.
struct Decoded {
  std::map<uint64_t, std::string> processes;                     // uuid -> name
  std::map<uint64_t, std::pair<uint64_t, std::string>> threads;  // uuid -> (parent, name)
  std::map<uint64_t, std::string> counter_tracks;                // uuid -> name
  std::vector<Slice> slices;
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters;  // uuid -> values
  std::vector<Instant> instants;
  size_t interned_names = 0;
};

Decoded read_trace(const std::string& file) {
  Decoded d;
  std::map<uint64_t, std::string> names, annotation_names, values;
  std::set<std::string> name_texts;
  std::map<uint64_t, std::vector<size_t>> open;  // track -> open slice indices
  std::map<uint64_t, uint64_t> last_time;        // track -> last event time
  bool first_packet = true;
  for (const Field& p : decode(file)) {
    EXPECT_EQ(p.number, 1u);
    const std::vector<Field> packet = decode(p.bytes);
    const Field* seq = first(packet, 10);
    EXPECT_TRUE(seq != nullptr && seq->value == 1) << "every packet on sequence 1";
    const Field* flags = first(packet, 13);
    const uint64_t flag_bits = flags ? flags->value : 0;
    if (first_packet) {
      EXPECT_EQ(flag_bits & 1, 1u) << "the first packet clears the state";
    }
    first_packet = false;
    if (const Field* interned = first(packet, 12)) {
      const auto entries = decode(interned->bytes);
      for (const Field& e : entries) {
        const auto entry = decode(e.bytes);
        const uint64_t iid = first(entry, 1)->value;
        const std::string text(first(entry, 2)->bytes);
        auto& table = e.number == 2 ? names : e.number == 3 ? annotation_names : values;
        if (e.number == 1) continue;  // the category
        EXPECT_TRUE(table.emplace(iid, text).second) << "iid " << iid << " interned twice";
        if (e.number == 2) {
          EXPECT_TRUE(name_texts.insert(text).second) << text << " interned twice";
          ++d.interned_names;
        }
      }
    }
    if (const Field* td = first(packet, 60)) {
      const auto t = decode(td->bytes);
      const uint64_t uuid = first(t, 1)->value;
      if (const Field* process = first(t, 3)) {
        d.processes[uuid] = std::string(first(decode(process->bytes), 6)->bytes);
      } else if (const Field* thread = first(t, 4)) {
        d.threads[uuid] = {first(t, 5)->value, std::string(first(decode(thread->bytes), 5)->bytes)};
      } else {
        EXPECT_NE(first(t, 8), nullptr) << "a track is a process, a thread or a counter";
        d.counter_tracks[uuid] = std::string(first(t, 2)->bytes);
      }
    }
    const Field* te = first(packet, 11);
    if (te == nullptr) continue;
    const auto event = decode(te->bytes);
    const uint64_t type = first(event, 9)->value;
    const uint64_t track = first(event, 11)->value;
    const uint64_t time = first(packet, 8)->value;
    if (type == 4) {
      EXPECT_TRUE(d.counter_tracks.count(track)) << "counter before its track";
      double v;
      const uint64_t bits = first(event, 44)->value;
      std::memcpy(&v, &bits, sizeof v);
      d.counters[track].push_back({time, v});
      continue;
    }
    auto args_of = [&](const std::vector<Field>& ev) {
      std::map<std::string, std::string> args;
      for (const Field& a : all(ev, 4)) {
        const auto annotation = decode(a.bytes);
        const std::string key = annotation_names[first(annotation, 1)->value];
        if (const Field* iid = first(annotation, 17)) {
          args[key] = values[iid->value];
        } else if (const Field* n = first(annotation, 4)) {
          args[key] = std::to_string(static_cast<int64_t>(n->value));
        } else if (first(annotation, 2) != nullptr) {
          args[key] = "true";
        }
      }
      return args;
    };
    if (type == 3) {
      EXPECT_TRUE(d.threads.count(track)) << "instant before its track";
      EXPECT_EQ(flag_bits & 2, 2u) << "an instant refers to interned names";
      const uint64_t name_iid = first(event, 10)->value;
      EXPECT_TRUE(names.count(name_iid)) << "name iid " << name_iid << " used before interned";
      d.instants.push_back({track, time, names[name_iid], args_of(event)});
      continue;
    }
    EXPECT_TRUE(d.threads.count(track)) << "slice event before its track";
    EXPECT_GE(time, last_time[track]) << "time runs back on a track";
    last_time[track] = time;
    if (type == 2) {
      EXPECT_FALSE(open[track].empty()) << "an end without a begin";
      if (open[track].empty()) continue;
      d.slices[open[track].back()].end = time;
      open[track].pop_back();
      continue;
    }
    EXPECT_EQ(type, 1u) << "a slice event is a begin, an end, an instant or a counter";
    if (type != 1) continue;
    EXPECT_EQ(flag_bits & 2, 2u) << "a begin refers to interned names";
    Slice s;
    s.track = track;
    s.begin = time;
    const uint64_t name_iid = first(event, 10)->value;
    EXPECT_TRUE(names.count(name_iid)) << "name iid " << name_iid << " used before interned";
    s.name = names[name_iid];
    s.args = args_of(event);
    for (const Field& f : all(event, 47)) s.flows_out.push_back(f.value);
    for (const Field& f : all(event, 48)) s.flows_in.push_back(f.value);
    open[track].push_back(d.slices.size());
    d.slices.push_back(s);
  }
  for (const auto& [track, still] : open) EXPECT_TRUE(still.empty()) << "unclosed slice";
  return d;
}

const Slice* slice_named(const Decoded& d, const std::string& name) {
  for (const Slice& s : d.slices)
    if (s.name == name) return &s;
  return nullptr;
}

std::string write(const std::vector<StitchedTrace>& traces) {
  std::ostringstream out;
  PerfettoTraceWriter writer(out);
  for (const StitchedTrace& t : traces) writer.on_stitched_trace(t);
  writer.finish();
  return out.str();
}

TEST(PerfettoTrace, EveryExecutionIsOneSliceWithItsTimesOnItsThread) {
  const StitchedTrace stitched = stitched_sample();
  const Decoded d = read_trace(write({stitched}));
  ASSERT_EQ(d.slices.size(), execution_count(stitched));
  EXPECT_EQ(d.processes.size(), 2u);  // h1, h2
  EXPECT_EQ(d.threads.size(), 3u);    // threads 7, 8 of h1 and 3 of h2
  std::set<std::string> hosts;
  for (const auto& [uuid, name] : d.processes) hosts.insert(name);
  EXPECT_EQ(hosts, (std::set<std::string>{"h1", "h2"}));
  for (const auto& [uuid, thread] : d.threads) EXPECT_TRUE(d.processes.count(thread.first));
  // Each execution's exact times, under its short label.
  for (const SubTrace& part : stitched.parts) {
    for (const Execution& e : part.trace.executions) {
      bool found = false;
      for (const Slice& s : d.slices) {
        if (s.name != execution_label(e, true) || s.args.at("eoi") != std::to_string(e.eoi) ||
            s.args.at("trace_id") != std::to_string(part.trace.trace_id))
          continue;
        found = true;
        EXPECT_EQ(s.begin, static_cast<uint64_t>(e.tin)) << s.name;
        EXPECT_EQ(s.end, static_cast<uint64_t>(e.tout)) << s.name;
        EXPECT_EQ(s.args.at("operation"), e.operation);
      }
      EXPECT_TRUE(found) << e.operation;
    }
  }
  // The two parts on h1 are on two tracks, the part on h2 on a third.
  std::set<uint64_t> tracks;
  for (const Slice& s : d.slices) tracks.insert(s.track);
  EXPECT_EQ(tracks.size(), 3u);
}

// The sample again, `delta` ns later (a thread runs its traces one after
// the other).
StitchedTrace later_sample(int64_t delta) {
  StitchedTrace s = stitched_sample();
  for (SubTrace& part : s.parts) {
    for (Execution& e : part.trace.executions) {
      e.tin += delta;
      e.tout += delta;
    }
  }
  return s;
}

TEST(PerfettoTrace, NamesAreInternedOnceAcrossTraces) {
  const Decoded d = read_trace(write({stitched_sample(), later_sample(5000)}));
  EXPECT_EQ(d.slices.size(), 2 * execution_count(stitched_sample()));
  // Distinct labels of the sample: Main.main, Svc.handle, Dao.query,
  // Svc.submit, Worker.run, Worker.step, Api.serve.
  std::set<std::string> labels;
  for (const Slice& s : d.slices) labels.insert(s.name);
  EXPECT_EQ(d.interned_names, labels.size());
  EXPECT_EQ(labels.size(), 7u);
}

TEST(PerfettoTrace, FlowsLinkEachContinuedPartToItsParentExecution) {
  const Decoded d = read_trace(write({stitched_sample()}));
  const Slice* submit =
      slice_named(d, execution_label(stitched_sample().parts[0].trace.executions[3], true));
  const Slice* worker =
      slice_named(d, execution_label(stitched_sample().parts[1].trace.executions[0], true));
  const Slice* step =
      slice_named(d, execution_label(stitched_sample().parts[1].trace.executions[1], true));
  const Slice* remote =
      slice_named(d, execution_label(stitched_sample().parts[2].trace.executions[0], true));
  ASSERT_TRUE(submit && worker && step && remote);
  ASSERT_EQ(submit->flows_out.size(), 1u);
  ASSERT_EQ(worker->flows_in.size(), 1u);
  EXPECT_EQ(submit->flows_out[0], worker->flows_in[0]);
  ASSERT_EQ(step->flows_out.size(), 1u);
  ASSERT_EQ(remote->flows_in.size(), 1u);
  EXPECT_EQ(step->flows_out[0], remote->flows_in[0]);
  EXPECT_NE(submit->flows_out[0], step->flows_out[0]);
  EXPECT_EQ(worker->args.at("part"), "1");
}

TEST(PerfettoTrace, FailedExecutionsCarryTheirCause) {
  const Decoded d = read_trace(write({stitched_sample()}));
  size_t failed = 0;
  for (const Slice& s : d.slices) {
    if (!s.args.count("failed")) continue;
    ++failed;
    EXPECT_EQ(s.args.at("cause"), "java.io.IOException: disk");
  }
  EXPECT_EQ(failed, 1u);
}

// A callee outside its caller's span (clock skew) is clamped into it, so
// the slices still nest.
TEST(PerfettoTrace, CalleesOutsideTheirCallerAreClampedIntoIt) {
  StitchedTrace s;
  s.parts.push_back(
      SubTrace{make_trace(1, 1,
                          {exec("void a.A.outer()", "a.A", kT0 + 100, kT0 + 200, 0, 0),
                           exec("void a.A.inner()", "a.A", kT0 + 150, kT0 + 260, 1, 1)}),
               -1, -1});
  const Decoded d = read_trace(write({s}));
  const Slice* inner = slice_named(d, "A.inner()");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->end, static_cast<uint64_t>(kT0 + 200));
  EXPECT_EQ(inner->args.at("clamped"), "true");
}

TEST(PerfettoTrace, SamplerRecordsBecomeCounterTracksOfTheirHost) {
  std::ostringstream out;
  PerfettoTraceWriter writer(out);
  const format::RecordSchema* cpu =
      format::find_builtin_schema(format::kieker_class::kCpuUtilization);
  ASSERT_NE(cpu, nullptr);
  for (int i = 0; i < 2; ++i) {
    format::Record r;
    format::reset_to_defaults(r, cpu);
    r.values[cpu->field_index("timestamp")] = int64_t{kT0 + i * 1000};
    r.values[cpu->field_index("hostname")] = std::string_view("h1");
    r.values[cpu->field_index("cpuID")] = std::string_view("0");
    r.values[cpu->field_index("totalUtilization")] = 0.25 + 0.5 * i;
    EXPECT_TRUE(writer.on_sampler_record(r));
  }
  format::Record other;
  format::reset_to_defaults(other,
                            format::find_builtin_schema(format::kieker_class::kBeforeOperation));
  EXPECT_FALSE(writer.on_sampler_record(other));
  writer.finish();
  const Decoded d = read_trace(out.str());
  // user, system, wait, nice, irq, totalUtilization, idle of CPU 0.
  EXPECT_EQ(d.counter_tracks.size(), 7u);
  EXPECT_EQ(writer.stats().counter_values, 14u);
  EXPECT_EQ(d.processes.size(), 1u);
  uint64_t total = 0;
  for (const auto& [uuid, name] : d.counter_tracks)
    if (name == "CPUUtilizationRecord 0 totalUtilization") total = uuid;
  ASSERT_NE(total, 0u);
  ASSERT_EQ(d.counters.at(total).size(), 2u);
  EXPECT_EQ(d.counters.at(total)[0].first, static_cast<uint64_t>(kT0));
  EXPECT_DOUBLE_EQ(d.counters.at(total)[0].second, 0.25);
  EXPECT_DOUBLE_EQ(d.counters.at(total)[1].second, 0.75);
}

TEST(PerfettoTrace, LostMarkersAreInstantsOnTheirThreadsTrack) {
  std::ostringstream out;
  PerfettoTraceWriter writer(out);
  // A marker before any trace (its thread's track is made for it), the
  // sample trace (h1 threads 7 and 8, h2 thread 3), one on thread 7.
  writer.on_lost_events({kT0 - 50, "h1", 9, 5});
  writer.on_stitched_trace(stitched_sample());
  writer.on_lost_events({kT0 + 2000, "h1", 7, 42});
  writer.finish();
  EXPECT_EQ(writer.stats().loss_markers, 2u);
  EXPECT_EQ(writer.stats().events_lost, 47u);
  const Decoded d = read_trace(out.str());
  ASSERT_EQ(d.instants.size(), 2u);
  EXPECT_EQ(d.threads.size(), 4u) << "threads 7, 8, 3 and the marker's 9";
  EXPECT_EQ(d.threads.at(d.instants[0].track).second, "thread 9");
  EXPECT_EQ(d.instants[0].args.at("lost"), "5");
  EXPECT_EQ(d.instants[0].time, static_cast<uint64_t>(kT0 - 50));
  // The second is on the track of thread 7's slices (a.Main.main is its root).
  const Instant& on7 = d.instants[1];
  EXPECT_EQ(on7.name, "events lost");
  EXPECT_EQ(on7.args.at("lost"), "42");
  EXPECT_EQ(on7.time, static_cast<uint64_t>(kT0 + 2000));
  bool same_track = false;
  for (const Slice& s : d.slices)
    if (s.args.count("trace_id") && s.args.at("trace_id") == "10") same_track |= s.track == on7.track;
  EXPECT_TRUE(same_track);
}

TEST(PerfettoTrace, ANativeLogsLostMarkerIsDrawnWhereItHappened) {
  // A native log as libsonde writes one: two traces on thread 4242, and
  // between them a marker for 17 events the thread could not record.
  const std::string log = ::testing::TempDir() + "perfetto_lost.sonde";
  const std::string trace = ::testing::TempDir() + "perfetto_lost.pftrace";
  {
    format::FileSink sink(log);
    ASSERT_TRUE(sink.ok());
    format::NativeWriter w(sink);
    ASSERT_TRUE(w.begin());
    w.meta("host", "h9");
    w.clock(0, kT0, 1.0);
    w.thread(0, 4242, "main");
    w.operation(1, "work", format::native::OperationKind::kManual, "prog", 0, "", 0);
    w.begin_events(0, 0);
    w.trace_begin(0, 1, -1, -1);
    w.enter(0, 1);
    w.exit(100, 1);
    w.lost(150, 17);
    w.trace_begin(200, 2, -1, -1);
    w.enter(200, 1);
    w.exit(300, 1);
    w.end_events();
    ASSERT_TRUE(w.finish(4, 17));
  }
  const TraceExportResult r = export_traces(log, TraceFormat::kPerfetto, trace);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.traces, 2u);
  EXPECT_EQ(r.loss_markers, 1u);
  std::ifstream in(trace, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Decoded d = read_trace(bytes);
  ASSERT_EQ(d.instants.size(), 1u);
  EXPECT_EQ(d.instants[0].args.at("lost"), "17");
  EXPECT_EQ(d.instants[0].time, static_cast<uint64_t>(kT0 + 150));
  EXPECT_EQ(d.threads.at(d.instants[0].track).second, "thread 4242");
  ASSERT_EQ(d.slices.size(), 2u);
  EXPECT_EQ(d.slices[0].track, d.instants[0].track) << "on the track of the thread's slices";
}

TEST(PerfettoTrace, NoTracesIsAnEmptyTrace) { EXPECT_EQ(write({}), ""); }

}  // namespace
}  // namespace sonde::analysis::test
