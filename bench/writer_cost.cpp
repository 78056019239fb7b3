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
#include "monitor/config.hpp"
#include "monitor/controller.hpp"
#include "monitor/writer_core.hpp"
#include "monitor/writers/writer_factories.hpp"

// registry.cpp asks the controller whether an operation is monitored; the
// benchmark has no controller.
namespace sonde::monitor {
bool operation_monitored(std::string_view) { return true; }
std::atomic<uint8_t> g_op_tag{2};
}  // namespace sonde::monitor

using namespace sonde::monitor;

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

int main(int argc, char** argv) {
  double millions = argc > 1 ? std::atof(argv[1]) : 40;
  int depth = argc > 2 ? std::atoi(argv[2]) : 10;
  Config config;
  if (std::string err = load_config(config); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  auto events_total = static_cast<uint64_t>(millions * 1e6);
  ProcessInfo info;
  info.application = "writer_cost";
  info.pid = 1;
  info.timer = "tsc";
  WriterCore core(config, make_event_writer(config), info);
  if (std::string err = core.open(); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
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
    double t0 = now_ns();
    core.consume(ch, buffer.data(), buffer.data() + n);
    spent += now_ns() - t0;
  }
  double t0 = now_ns();
  core.close();
  spent += now_ns() - t0;
  uint64_t bytes = core.writer().bytes_written();
  std::printf("%.3f ns/event  %.3f bytes/event  %llu events written  %s\n",
              spent / static_cast<double>(probe_events),
              static_cast<double>(bytes) / static_cast<double>(probe_events),
              static_cast<unsigned long long>(core.events_written()),
              core.writer().location().c_str());
  return core.events_written() == probe_events ? 0 : 1;
}
