// The writer thread's cost per event, without the probes and without the
// other core: feeds MooBench-shaped raw buffers (a trace of DEPTH nested
// calls: trace begin, DEPTH enters, DEPTH exits) through WriterCore and the
// configured writer (SONDE_WRITER, SONDE_COMPRESSION, ... as for a monitored
// program; SONDE_OUT is where the log goes) and prints the writer's ns per
// event and the log's bytes per event. Timestamps advance 26–37 ticks per
// event, about what probes 14 ns apart produce on a 2.3 GHz TSC, so the
// codec sees realistic deltas.
//   writer_cost [MILLION_EVENTS] [DEPTH]
// Under stress, probes wait for buffers when this exceeds their own cost
// per event (docs/PERFORMANCE.md); unlike bench/probe_cost.sh it measures
// one thread on one core, in CPU time, so a busy host disturbs it far less.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "monitor/channel.hpp"
#include "writer_bench.hpp"

using namespace sonde::monitor;

int main(int argc, char** argv) {
  double millions = argc > 1 ? std::atof(argv[1]) : 40;
  int depth = argc > 2 ? std::atoi(argv[2]) : 10;
  Config config;
  std::unique_ptr<WriterCore> opened = sonde::bench::open_writer_core(config, "writer_cost");
  if (!opened) return 2;
  WriterCore& core = *opened;
  auto events_total = static_cast<uint64_t>(millions * 1e6);
  ThreadChannel ch;
  ch.name = "main";
  const size_t capacity = config.buffer_events;
  std::vector<RawEvent> buffer(capacity);
  uint64_t tsc = 1000000, trace_id = uint64_t{1} << 32, rng = 88172645463325252ull;
  int level = 0;  // position in the trace: 0 = begin, 1..depth enters, then exits
  uint64_t produced = 0, probe_events = 0;
  double spent = 0;
  while (produced < events_total) {
    size_t n = 0;
    // Fills a buffer as probes would (room for a trace begin plus an event).
    while (n + 2 <= capacity && produced < events_total) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      tsc += 26 + (rng & 7) + ((rng >> 3) & 3);
      if (level == 0) {
        buffer[n++] = {trace_id++, pack(RawKind::kTraceBegin, 0)};
        ++level;
      } else if (level <= depth) {
        buffer[n++] = {tsc, pack(RawKind::kEnterOp, 1)};
        ++level, ++probe_events;
      } else {
        buffer[n++] = {tsc, pack(RawKind::kExitOp, 1)};
        level = level == 2 * depth ? 0 : level + 1;
        ++probe_events;
      }
      ++produced;
    }
    double t0 = sonde::bench::thread_cpu_ns();
    core.consume(ch, buffer.data(), buffer.data() + n);
    spent += sonde::bench::thread_cpu_ns() - t0;
  }
  double t0 = sonde::bench::thread_cpu_ns();
  core.close();
  spent += sonde::bench::thread_cpu_ns() - t0;
  uint64_t bytes = core.writer().bytes_written();
  std::printf("%.3f ns/event  %.3f bytes/event  %llu events written  %s\n",
              spent / static_cast<double>(probe_events),
              static_cast<double>(bytes) / static_cast<double>(probe_events),
              static_cast<unsigned long long>(core.events_written()),
              core.writer().location().c_str());
  return core.events_written() == probe_events ? 0 : 1;
}
