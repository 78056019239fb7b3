// MooBench's benchmark driver: each of --threads threads calls
// monitoredMethod(--method-time, --depth) --calls times and records every
// call's duration into a pre-faulted array; the first --warmup fraction of
// each thread's calls is discarded. One run of this program is one loop of
// `sonde bench`, in a fresh process. It writes into --out DIR:
//   durations.bin  the timed calls' durations, uint64 nanoseconds, native
//                  byte order, thread after thread
//   result.txt     key=value lines: the parameters, the timed call count,
//                  the wall time of the timed phase, and the monitor's own
//                  counters (sonde_get_stats, looked up at run time so that
//                  the same binary runs with and without libsonde)
//   bench_moobench --calls N --depth D --method-time NS --threads T
//                  --warmup FRACTION --out DIR
#include <dlfcn.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "moobench.hpp"

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Options {
  uint64_t calls = 1000000;
  int depth = 10;
  uint64_t method_time_ns = 0;
  int threads = 1;
  double warmup = 0.5;
  std::string out;
};

bool parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    char* end = nullptr;
    const char* value = argv[i + 1];
    if (key == "--calls") {
      o->calls = std::strtoull(value, &end, 10);
    } else if (key == "--depth") {
      o->depth = static_cast<int>(std::strtol(value, &end, 10));
    } else if (key == "--method-time") {
      o->method_time_ns = std::strtoull(value, &end, 10);
    } else if (key == "--threads") {
      o->threads = static_cast<int>(std::strtol(value, &end, 10));
    } else if (key == "--warmup") {
      o->warmup = std::strtod(value, &end);
    } else if (key == "--out") {
      o->out = value;
      continue;
    } else {
      std::fprintf(stderr, "bench_moobench: unknown option %s\n", key.c_str());
      return false;
    }
    if (end == value || *end != '\0') {
      std::fprintf(stderr, "bench_moobench: %s needs a number, got '%s'\n", key.c_str(), value);
      return false;
    }
  }
  if (argc % 2 == 0 || o->out.empty() || o->calls == 0 || o->depth < 1 || o->threads < 1 ||
      o->warmup < 0 || o->warmup >= 1) {
    std::fprintf(stderr,
                 "usage: bench_moobench --calls N --depth D --method-time NS --threads T "
                 "--warmup FRACTION(0..1) --out DIR\n");
    return false;
  }
  return true;
}

// One thread's loop. `durations` is pre-faulted by the caller so that page
// faults never land inside a timed call.
void run_thread(const Options& o, uint64_t warmup_calls, std::vector<uint64_t>* durations) {
  uint64_t sink = 0;
  for (uint64_t i = 0; i < warmup_calls; ++i) sink += monitoredMethod(o.method_time_ns, o.depth);
  uint64_t* out = durations->data();
  const uint64_t timed = durations->size();
  for (uint64_t i = 0; i < timed; ++i) {
    const uint64_t start = now_ns();
    sink += monitoredMethod(o.method_time_ns, o.depth);
    out[i] = now_ns() - start;
  }
  asm volatile("" : : "r"(sink));
}

// sonde_stats as in include/sonde/sonde.h, repeated so that the driver needs
// no libsonde at link time (the plain and -finstrument-functions builds).
struct MonitorStats {
  uint64_t events_recorded, events_written, events_dropped, buffers_written, write_errors;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_args(argc, argv, &o)) return 2;
  const uint64_t warmup_calls = static_cast<uint64_t>(static_cast<double>(o.calls) * o.warmup);
  const uint64_t timed_calls = o.calls - warmup_calls;
  std::vector<std::vector<uint64_t>> durations(static_cast<size_t>(o.threads));
  for (auto& d : durations) d.assign(timed_calls, 1);  // assign writes every page: pre-faulted

  const uint64_t start = now_ns();
  if (o.threads == 1) {
    run_thread(o, warmup_calls, &durations[0]);
  } else {
    std::vector<std::thread> threads;
    for (auto& d : durations) threads.emplace_back(run_thread, std::cref(o), warmup_calls, &d);
    for (auto& t : threads) t.join();
  }
  const uint64_t elapsed = now_ns() - start;

  // Stop the monitor (flushes every buffer) before reading its counters, so
  // that "written" is final. Absent without libsonde.
  MonitorStats stats{};
  bool monitored = false;
  if (auto shutdown = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "sonde_shutdown"))) {
    shutdown();
  }
  if (auto get = reinterpret_cast<MonitorStats (*)()>(dlsym(RTLD_DEFAULT, "sonde_get_stats"))) {
    stats = get();
    monitored = true;
  }

  const std::string bin_path = o.out + "/durations.bin";
  FILE* bin = std::fopen(bin_path.c_str(), "wb");
  if (!bin) {
    std::fprintf(stderr, "bench_moobench: cannot write %s: %s\n", bin_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  bool ok = true;
  for (const auto& d : durations) {
    ok = ok && std::fwrite(d.data(), sizeof(uint64_t), d.size(), bin) == d.size();
  }
  ok = (std::fclose(bin) == 0) && ok;
  const std::string txt_path = o.out + "/result.txt";
  FILE* txt = std::fopen(txt_path.c_str(), "w");
  if (!txt) {
    std::fprintf(stderr, "bench_moobench: cannot write %s: %s\n", txt_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::fprintf(txt,
               "calls=%llu\ndepth=%d\nmethod_time_ns=%llu\nthreads=%d\nwarmup_calls=%llu\n"
               "timed_calls=%llu\nelapsed_ns=%llu\nmonitored=%d\nevents_recorded=%llu\n"
               "events_written=%llu\nevents_dropped=%llu\n",
               static_cast<unsigned long long>(o.calls), o.depth,
               static_cast<unsigned long long>(o.method_time_ns), o.threads,
               static_cast<unsigned long long>(warmup_calls),
               static_cast<unsigned long long>(timed_calls),
               static_cast<unsigned long long>(elapsed), monitored ? 1 : 0,
               static_cast<unsigned long long>(stats.events_recorded),
               static_cast<unsigned long long>(stats.events_written),
               static_cast<unsigned long long>(stats.events_dropped));
  ok = (std::fclose(txt) == 0) && ok;
  if (!ok) {
    std::fprintf(stderr, "bench_moobench: writing the results into %s failed\n", o.out.c_str());
    return 1;
  }
  return 0;
}
