// The writer thread's cost per event on a real program's event stream:
// replays the busiest thread of a native log (its operations, addresses and
// raw timestamps) through WriterCore and the configured writer, and prints
// the writer's CPU ns per event. Where bench_writer_cost feeds MooBench's
// one operation with regular deltas, this feeds what -finstrument-functions
// produces in leveldb or SQLite: hundreds of functions, irregular deltas.
//   writer_replay LOG [--cross-core] [--million N] [--repeat K]
// --cross-core: a second thread fills the buffers, as the probes do on
// another core, so the writer reads lines another core wrote; without it
// the buffers are filled and read on one thread (cache-warm). The
// difference between the two is what the cores' cache traffic costs.
// Environment as for a monitored program (SONDE_WRITER, SONDE_OUT, ...).
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "format/native_reader.hpp"
#include "monitor/channel.hpp"
#include "writer_bench.hpp"

using namespace sonde::monitor;
namespace native = sonde::format::native;

namespace {

// The raw events of every thread of the log, as probes wrote them.
struct Capture : sonde::format::NativeVisitor {
  std::unordered_map<uint32_t, uint64_t> address;  // operation id -> address
  std::unordered_map<uint32_t, std::vector<RawEvent>> threads;
  uint64_t limit = 0, kept = 0;

  void on_operation(const sonde::format::NativeOperation& op) override {
    // Operations without an address (manual ones) get distinct fake ones.
    address[op.id] = op.address != 0 ? op.address : 0x10000000 + 16 * uint64_t{op.id};
  }
  void on_event(const sonde::format::NativeEvent& e) override {
    if (kept >= limit) return;
    RawEvent r{};
    switch (e.kind) {
      case native::EventKind::kEnter:
        r = {e.tsc, pack(RawKind::kEnterFn, address[e.op])};
        break;
      case native::EventKind::kExit:
      case native::EventKind::kExitFailed:
        r = {e.tsc, pack(RawKind::kExitFn, address[e.op])};
        break;
      case native::EventKind::kTraceBegin:
        r = {e.trace_id, pack(RawKind::kTraceBegin, 0)};
        break;
      default:
        return;
    }
    threads[e.thread].push_back(r);
    ++kept;
  }
};

struct Options {
  std::string log;
  bool cross_core = false;
  double million = 40;
  int repeat = 1;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cross-core") {
      o.cross_core = true;
    } else if (a == "--million" && i + 1 < argc) {
      o.million = std::atof(argv[++i]);
    } else if (a == "--repeat" && i + 1 < argc) {
      o.repeat = std::atoi(argv[++i]);
    } else if (o.log.empty() && a[0] != '-') {
      o.log = a;
    } else {
      return false;
    }
  }
  return !o.log.empty() && o.million > 0 && o.repeat > 0;
}

// One buffer of the ring between the filling thread and the writer.
struct Slot {
  std::vector<RawEvent> events;
  std::atomic<size_t> filled{0};  // 0: free for the filler; else events ready
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: writer_replay LOG [--cross-core] [--million N] [--repeat K]\n");
    return 2;
  }
  Capture capture;
  capture.limit = static_cast<uint64_t>(o.million * 1e6);
  const auto read = sonde::format::read_native_file(o.log, capture);
  if (!read.ok) {
    std::fprintf(stderr, "writer_replay: %s\n", read.error.c_str());
    return 1;
  }
  const std::vector<RawEvent>* stream = nullptr;
  for (const auto& [thread, events] : capture.threads)
    if (!stream || events.size() > stream->size()) stream = &events;
  if (!stream || stream->empty()) {
    std::fprintf(stderr, "writer_replay: %s holds no events\n", o.log.c_str());
    return 1;
  }
  Config config;
  std::unique_ptr<WriterCore> opened = sonde::bench::open_writer_core(config, "writer_replay");
  if (!opened) return 2;
  WriterCore& core = *opened;
  ThreadChannel ch;
  ch.name = "main";
  const size_t capacity = config.buffer_events;
  const size_t total = stream->size() * static_cast<size_t>(o.repeat);
  double spent = 0;
  // The stream again and again (--repeat): positions wrap around.
  auto fill = [&](std::vector<RawEvent>& buffer, size_t from) {
    size_t n = std::min(capacity, total - from);
    for (size_t i = 0; i < n; ++i) buffer[i] = (*stream)[(from + i) % stream->size()];
    return n;
  };
  if (!o.cross_core) {
    std::vector<RawEvent> buffer(capacity);
    for (size_t at = 0; at < total;) {
      size_t n = fill(buffer, at);
      at += n;
      double t0 = sonde::bench::thread_cpu_ns();
      core.consume(ch, buffer.data(), buffer.data() + n);
      spent += sonde::bench::thread_cpu_ns() - t0;
    }
  } else {
    constexpr size_t kRing = 8;
    std::vector<Slot> ring(kRing);
    for (auto& s : ring) s.events.resize(capacity);
    std::thread filler([&] {
      size_t at = 0;
      for (size_t k = 0; at < total; k = (k + 1) % kRing) {
        Slot& s = ring[k];
        while (s.filled.load(std::memory_order_acquire) != 0) __builtin_ia32_pause();
        size_t n = fill(s.events, at);
        at += n;
        s.filled.store(n, std::memory_order_release);
      }
    });
    size_t done = 0;
    for (size_t k = 0; done < total; k = (k + 1) % kRing) {
      Slot& s = ring[k];
      size_t n;
      while ((n = s.filled.load(std::memory_order_acquire)) == 0) __builtin_ia32_pause();
      double t0 = sonde::bench::thread_cpu_ns();
      core.consume(ch, s.events.data(), s.events.data() + n);
      spent += sonde::bench::thread_cpu_ns() - t0;
      done += n;
      s.filled.store(0, std::memory_order_release);
    }
    filler.join();
  }
  double t0 = sonde::bench::thread_cpu_ns();
  core.close();
  spent += sonde::bench::thread_cpu_ns() - t0;
  const auto written = core.events_written();
  std::printf("%.3f ns/event  %.3f bytes/event  %llu events written of %zu  %s%s\n",
              spent / static_cast<double>(written),
              static_cast<double>(core.writer().bytes_written()) / static_cast<double>(written),
              static_cast<unsigned long long>(written), total, o.cross_core ? "cross-core " : "",
              core.writer().location().c_str());
  return 0;
}
