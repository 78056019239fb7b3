// `sonde bench`: MooBench for C++ (docs/bench.md). Runs the MooBench
// driver (bench/moobench) in a fresh process per loop under each
// configuration, interleaved, and reports ns per monitored call, MooBench's
// I/C/W decomposition, records produced vs written, bytes per event,
// throughput, and the peers measured on the same -finstrument-functions
// binary.
//
// Exit status: 0 ok; 1 a configuration failed or lost records (the results
// are still written); 2 usage.
//
// About 500 lines: the configurations MooBench compares and the plan that
// interleaves them are tables that run_bench() walks; the runner, the
// statistics, the report and the machine's description are in
// bench_runner, bench_stats, bench_report and bench_machine.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "analysis/render/graphviz_render.hpp"
#include "cli/bench_machine.hpp"
#include "cli/bench_report.hpp"
#include "cli/bench_runner.hpp"
#include "cli/bench_stats.hpp"
#include "cli/command.hpp"
#include "stats/percentile.hpp"

extern char** environ;

namespace sonde::cli {
namespace {

namespace fs = std::filesystem;
using bench::Config;
using bench::Sink;
using bench::Workload;

struct BenchOptions {
  bool quick = false;
  std::string json_path, csv_path, svg_dir;
  int loops = 0;       // 0 = 10, quick 3
  uint64_t calls = 0;  // 0 = 1,000,000, quick 100,000
  int depth = 10;
  uint64_t method_time_ns = 0;
  int threads = 1;
  double warmup = 0.5;
  std::vector<std::string> experiments{"stress"};
  std::string only;  // comma list of configuration names to run
  std::string bench_dir = SONDE_BENCH_DIR;
  std::string monitor_lib = SONDE_BUILD_LIBDIR "/libsonde.so";
  std::string work_dir;  // default: a fresh directory under the temp dir
};

bool on_path(const std::string& tool) { return !analysis::find_executable(tool).empty(); }

std::string find_library(const std::string& name) {
  for (const char* dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/local/lib"}) {
    const fs::path p = fs::path(dir) / name;
    if (fs::exists(p)) return p.string();
  }
  return "";
}

Config sonde_config(std::string name, std::string binary, std::string writer, Sink sink) {
  Config c;
  c.name = std::move(name);
  c.binary = std::move(binary);
  c.env = {{"SONDE_WRITER", std::move(writer)}};
  c.sink = sink;
  c.sonde = true;
  c.group = "sonde";
  return c;
}

// MooBench's configurations, then the automatic path and its peers.
std::vector<Config> all_configs(const BenchOptions& o) {
  std::vector<Config> cs;
  Config t;
  t.name = "T";
  t.binary = "bench_moobench_plain";
  t.group = "baseline";
  cs.push_back(t);
  Config ti = sonde_config("T+I", "bench_moobench_manual", "null", Sink::kNone);
  ti.env.emplace_back("SONDE_ENABLED", "false");
  cs.push_back(ti);
  cs.push_back(sonde_config("T+I+C", "bench_moobench_manual", "null", Sink::kNone));
  // The flight recorder: the same collection, buffers held in memory and
  // handed back instead of written (docs/flight-recorder.md).
  Config flight = sonde_config("T+I+C flight", "bench_moobench_manual", "native", Sink::kNone);
  flight.env.emplace_back("SONDE_FLIGHT", "on");
  cs.push_back(flight);
  for (const char* w : {"native", "kieker-bin", "kieker-dat"}) {
    cs.push_back(sonde_config(std::string("T+I+C+W ") + w, "bench_moobench_manual", w, Sink::kLog));
  }
  // The tcp writer with sonde's native stream (`tcp_protocol = native`, the
  // default of `sonde run --to`) into a receiver that counts.
  cs.push_back(sonde_config("T+I+C+W tcp", "bench_moobench_manual", "tcp", Sink::kTcp));
  // MooBench's live analysis: the same TCP stream into `sonde collect`'s
  // collector, which reconstructs, logs and indexes every trace as it arrives.
  cs.push_back(sonde_config("T+I+C+W+R collect", "bench_moobench_manual", "tcp", Sink::kCollect));
  // D: the collector reducing same-shape traces per 1-s window (--reduce).
  cs.push_back(sonde_config("T+I+C+W+R+D collect --reduce", "bench_moobench_manual", "tcp",
                            Sink::kCollectReduce));
  // The two over Kieker's TCP frames (`tcp_protocol = kieker`): what
  // MooBench measures of Kieker, so these compare with its published
  // figures; the sender encodes Kieker's binary records.
  for (auto [name, sink] : {std::pair{"T+I+C+W kieker-tcp", Sink::kTcp},
                            std::pair{"T+I+C+W+R collect kieker-tcp", Sink::kCollect}}) {
    Config k = sonde_config(name, "bench_moobench_manual", "tcp", sink);
    k.env.emplace_back("SONDE_TCP_PROTOCOL", "kieker");
    cs.push_back(k);
  }

  Config noop;
  noop.name = "auto: no-op hooks";
  noop.binary = "bench_moobench_cyg";
  noop.preload = (fs::path(o.bench_dir) / "libbench_noop_hooks.so").string();
  noop.group = "floor";
  cs.push_back(noop);
  for (const char* w : {"null", "native"}) {
    Config c = sonde_config(std::string("auto: sonde ") + w, "bench_moobench_cyg", w,
                            std::string(w) == "null" ? Sink::kNone : Sink::kLog);
    c.preload = o.monitor_lib;
    if (!fs::exists(c.preload)) c.skip_reason = "libsonde not found at " + c.preload;
    cs.push_back(c);
  }

  const bool lttng = on_path("lttng") && on_path("lttng-sessiond");
  for (const char* lib : {"liblttng-ust-cyg-profile.so", "liblttng-ust-cyg-profile-fast.so"}) {
    Config c;
    c.name =
        std::string("auto: lttng-ust ") +
        (std::string(lib).find("fast") != std::string::npos ? "cyg-profile-fast" : "cyg-profile");
    c.binary = "bench_moobench_cyg";
    c.group = "peer";
    c.sink = Sink::kPeerDir;
    c.preload = find_library(lib);
    if (!lttng)
      c.skip_reason = "lttng not installed (bash scripts/install-deps.sh --bench)";
    else if (c.preload.empty())
      c.skip_reason = std::string(lib) + " not found (liblttng-ust-dev)";
    // A real session per loop, writing its trace into the loop's directory.
    const std::string session = "sonde-bench-" + std::to_string(getpid());
    c.before = {
        {"lttng", "create", session, "--output={work}/peer"},
        {"lttng", "enable-event", "--userspace", "--session=" + session, "lttng_ust_cyg_profile*"},
        {"lttng", "start", session}};
    c.after = {{"lttng", "stop", session}, {"lttng", "destroy", session}};
    cs.push_back(c);
  }
  Config uftrace;
  uftrace.name = "auto: uftrace";
  uftrace.binary = "bench_moobench_cyg";
  uftrace.group = "peer";
  uftrace.sink = Sink::kPeerDir;
  uftrace.wrapper = {"uftrace", "record", "--no-libcall", "-d", "{work}/peer"};
  if (!on_path("uftrace"))
    uftrace.skip_reason = "uftrace not installed (bash scripts/install-deps.sh --bench)";
  cs.push_back(uftrace);

  // XRay mode: the clang++ -fxray-instrument build, libsonde preloaded.
  for (const char* w : {"null", "native"}) {
    Config c = sonde_config(std::string("auto: sonde xray ") + w, "bench_moobench_xray", w,
                            std::string(w) == "null" ? Sink::kNone : Sink::kLog);
    c.preload = o.monitor_lib;
    if (!fs::exists(fs::path(o.bench_dir) / c.binary)) {
      c.skip_reason = "no XRay build (bench_moobench_xray needs clang++ with its XRay runtime)";
    }
    cs.push_back(c);
  }

  if (!o.only.empty()) {
    std::set<std::string> keep;
    std::stringstream list(o.only);
    std::string n;
    while (std::getline(list, n, ',')) keep.insert(n);
    keep.insert("T");  // every decomposition and ratio needs the baseline
    std::erase_if(cs, [&](const Config& c) { return !keep.count(c.name); });
  }
  return cs;
}

struct Point {
  std::string experiment, label;
  Workload workload;
  std::vector<std::string> configs;  // empty = all
};

std::vector<Point> plan(const BenchOptions& o, const Workload& base, std::string* error) {
  std::vector<Point> points;
  const std::vector<std::string> light = {"T", "T+I", "T+I+C", "T+I+C+W native"};
  for (const auto& e : o.experiments) {
    if (e == "stress") {
      points.push_back({"stress", "depth " + std::to_string(base.depth), base, {}});
    } else if (e == "low-load") {
      for (uint64_t us : {200, 500}) {
        Workload w = base;
        w.method_time_ns = us * 1000;
        // A call now takes 200-500 µs: fewer calls keep the run's length.
        w.calls = std::max<uint64_t>(200, base.calls / 200);
        points.push_back({"low-load", "method time " + std::to_string(us) + " us", w, light});
      }
    } else if (e == "depth") {
      for (int d : {1, 2, 4, 8, 16, 32, 64}) {
        Workload w = base;
        w.depth = d;
        w.calls =
            std::max<uint64_t>(1000, base.calls * 10 / static_cast<uint64_t>(std::max(d, 10)));
        points.push_back(
            {"depth", "depth " + std::to_string(d), w, {"T", "T+I+C", "T+I+C+W native"}});
      }
    } else if (e == "threads") {
      for (int t : {1, 2}) {
        Workload w = base;
        w.threads = t;
        points.push_back({"threads", std::to_string(t) + " thread(s)", w, light});
      }
    } else if (e == "sync") {
      points.push_back({"sync", "async vs sync writer", base, {"T", "T+I+C+W native"}});
    } else {
      *error = "unknown experiment '" + e + "' (stress, low-load, depth, threads, sync)";
      return {};
    }
  }
  return points;
}

// One timestamp as the monitor takes it (rdtsc when the TSC is invariant),
// measured back to back: two of them bound a monitored call from below.
double timestamp_cost_ns() {
  // The least of several short rounds: a busy host only ever adds.
  double best = 1e9;
  for (int round = 0; round < 20; ++round) {
    timespec a{}, b{};
    constexpr int kN = 100000;
    uint64_t sink = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < kN; ++i) sink += __rdtsc();
    clock_gettime(CLOCK_MONOTONIC, &b);
    asm volatile("" : : "r"(sink));
    const double ns =
        static_cast<double>(b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
    best = std::min(best, ns / kN);
  }
  return best;
}

// LTTng needs a session daemon; if none runs, start one for this run and
// end it afterwards (only the one started here).
struct SessionDaemon {
  pid_t pid = 0;
  ~SessionDaemon() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      int status = 0;
      waitpid(pid, &status, 0);
    }
  }
  void start(const std::string& log) {
    const char* argv[] = {"lttng-sessiond", "--no-kernel", nullptr};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawnp(&pid, argv[0], &fa, nullptr, const_cast<char**>(argv), environ) != 0) pid = 0;
    posix_spawn_file_actions_destroy(&fa);
    // Give it time to open its sockets before the first `lttng create`.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
};

bool sessiond_running() { return std::system("pgrep -x lttng-sessiond >/dev/null 2>&1") == 0; }

double median(const std::vector<double>& v) { return v.empty() ? 0 : stats::percentile(v, 0.5); }

int run_bench(BenchOptions o) {
  if (o.loops == 0) o.loops = o.quick ? 3 : 10;
  if (o.calls == 0) o.calls = o.quick ? 100000 : 1000000;
  if (o.loops < 1 || o.depth < 1 || o.threads < 1 || o.warmup < 0 || o.warmup >= 1) {
    std::cerr << "sonde bench: --loops, --depth and --threads must be at least 1 and --warmup in "
                 "[0, 1)\n";
    return kUsage;
  }
  if (!fs::exists(fs::path(o.bench_dir) / "bench_moobench_plain")) {
    std::cerr << "sonde bench: the MooBench binaries are not in " << o.bench_dir
              << " (build the bench_moobench_* targets, or name their directory with "
                 "--bench-dir)\n";
    return kFailed;
  }
  const Workload base{o.calls, o.depth, o.method_time_ns, o.threads, o.warmup};
  std::string error;
  const std::vector<Point> points = plan(o, base, &error);
  if (!error.empty()) {
    std::cerr << "sonde bench: " << error << "\n";
    return kUsage;
  }
  const std::vector<Config> configs = all_configs(o);

  std::error_code ec;
  fs::path work = o.work_dir.empty()
                      ? fs::temp_directory_path() / ("sonde-bench-" + std::to_string(getpid()))
                      : fs::path(o.work_dir);
  fs::create_directories(work, ec);
  if (ec) {
    std::cerr << "sonde bench: cannot create " << work << ": " << ec.message() << "\n";
    return kFailed;
  }

  bench::Report report;
  report.machine = bench::describe_machine();
  report.loops = o.loops;
  report.quick = o.quick;
  report.timestamp_ns = timestamp_cost_ns();

  // What runs: per point, the selected configurations.
  struct Slot {
    const Config* config;
    bench::ConfigResult result;
    std::vector<float> pooled;
    std::vector<double> bytes_per_event, traces_per_s;
  };
  std::vector<std::vector<Slot>> slots(points.size());
  size_t total_runs = 0;
  bool need_lttng = false;
  for (size_t p = 0; p < points.size(); ++p) {
    for (const auto& c : configs) {
      const auto& want = points[p].configs;
      if (!want.empty() && std::find(want.begin(), want.end(), c.name) == want.end()) continue;
      Slot s{&c, {}, {}, {}, {}};
      s.result.name = c.name;
      s.result.group = c.group;
      s.result.skip_reason = c.skip_reason;
      s.result.writes =
          c.sonde && (c.sink == Sink::kLog || c.sink == Sink::kTcp || is_collector(c.sink));
      s.result.reconstructs = is_collector(c.sink);
      if (c.skip_reason.empty()) {
        total_runs += static_cast<size_t>(o.loops);
        need_lttng = need_lttng || !c.before.empty();
      }
      slots[p].push_back(std::move(s));
    }
  }
  // The sync experiment's second configuration: the native writer in sync mode.
  Config sync_native =
      sonde_config("T+I+C+W native, sync", "bench_moobench_manual", "native", Sink::kLog);
  sync_native.env.emplace_back("SONDE_MODE", "sync");
  for (size_t p = 0; p < points.size(); ++p) {
    if (points[p].experiment != "sync") continue;
    Slot s{&sync_native, {}, {}, {}, {}};
    s.result.name = sync_native.name;
    s.result.group = "sonde";
    s.result.writes = true;
    slots[p].push_back(std::move(s));
    total_runs += static_cast<size_t>(o.loops);
  }

  SessionDaemon daemon;
  if (need_lttng && !sessiond_running()) daemon.start((work / "lttng-sessiond.txt").string());

  const auto started = std::chrono::steady_clock::now();
  size_t done = 0;
  bool failed = false;
  for (int loop = 0; loop < o.loops; ++loop) {
    for (size_t p = 0; p < points.size(); ++p) {
      for (auto& s : slots[p]) {
        if (!s.config->skip_reason.empty()) continue;
        const fs::path dir = work / "loop";
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        bench::LoopResult r =
            bench::run_loop(*s.config, points[p].workload, o.bench_dir, dir.string());
        ++done;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::fprintf(stderr, "\r\033[K[%zu/%zu] loop %d/%d %s %s: %.2f ns  ETA %.0f s", done,
                     total_runs, loop + 1, o.loops, points[p].label.c_str(), s.config->name.c_str(),
                     r.mean_ns,
                     elapsed / static_cast<double>(done) * static_cast<double>(total_runs - done));
        if (!r.error.empty()) {
          s.result.errors.push_back("loop " + std::to_string(loop + 1) + ": " + r.error);
          failed = true;
          continue;
        }
        const Workload& w = points[p].workload;
        s.result.loop_means.push_back(r.mean_ns);
        s.pooled.insert(s.pooled.end(), r.per_call_ns.begin(), r.per_call_ns.end());
        s.result.events_recorded += r.events_recorded;
        s.result.events_written += r.events_written;
        s.result.events_dropped += r.events_dropped;
        if (s.result.writes) {
          s.result.records_produced +=
              w.calls * static_cast<uint64_t>(w.threads) * bench::records_per_call(w);
          s.result.records_written += r.records_read;
        }
        if (s.result.reconstructs) {
          s.result.traces_expected += w.calls * static_cast<uint64_t>(w.threads);
          s.result.traces_reconstructed += r.traces_reconstructed;
          s.result.traces_invalid += r.traces_invalid;
          s.result.reduced_traces += r.reduced_traces;
        }
        if (r.bytes > 0) {
          // Over the enter and exit events of every call (warm-up included),
          // the same for sonde and the peers (bench/probe_cost.sh does so too).
          s.bytes_per_event.push_back(
              static_cast<double>(r.bytes) /
              static_cast<double>(2 * w.calls * static_cast<uint64_t>(w.threads) *
                                  static_cast<uint64_t>(w.depth)));
        }
        // Mean of the full 1 s bins; a run shorter than a second has one partial bin.
        const auto& bins = r.traces_per_s;
        const size_t full = bins.size() > 1 ? bins.size() - 1 : bins.size();
        double sum = 0;
        for (size_t b = 0; b < full; ++b) sum += bins[b];
        if (bins.size() == 1 && r.elapsed_ns > 0) {
          s.traces_per_s.push_back(static_cast<double>(r.timed_calls) * 1e9 /
                                   static_cast<double>(r.elapsed_ns));
        } else if (full > 0) {
          s.traces_per_s.push_back(sum / static_cast<double>(full));
        }
        if (s.result.traces_per_s_bins.empty()) s.result.traces_per_s_bins = bins;
      }
    }
  }
  std::fprintf(stderr, "\r\033[Kdone: %zu runs in %.0f s\n", done,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  for (size_t p = 0; p < points.size(); ++p) {
    bench::PointResult pr;
    pr.experiment = points[p].experiment;
    pr.label = points[p].label;
    pr.workload = points[p].workload;
    for (auto& s : slots[p]) {
      s.result.summary = bench::summarize(s.pooled);
      s.pooled = {};
      s.result.bytes_per_event = median(s.bytes_per_event);
      s.result.traces_per_s = median(s.traces_per_s);
      if (s.result.writes && s.result.records_written != s.result.records_produced) {
        s.result.errors.push_back("records written " + std::to_string(s.result.records_written) +
                                  " != produced " + std::to_string(s.result.records_produced));
        failed = true;
      }
      if (s.result.reconstructs && s.result.traces_reconstructed != s.result.traces_expected) {
        s.result.errors.push_back("traces reconstructed " +
                                  std::to_string(s.result.traces_reconstructed) + " != produced " +
                                  std::to_string(s.result.traces_expected) + " (" +
                                  std::to_string(s.result.traces_invalid) + " closed as invalid)");
        failed = true;
      }
      pr.configs.push_back(std::move(s.result));
    }
    report.points.push_back(std::move(pr));
  }
  if (o.work_dir.empty()) fs::remove_all(work, ec);

  std::cout << bench::to_table(report);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << bench::to_json(report).dump(2) << "\n";
    if (!out) {
      std::cerr << "sonde bench: cannot write " << o.json_path << "\n";
      return kFailed;
    }
  }
  if (!o.csv_path.empty()) {
    std::ofstream out(o.csv_path);
    out << bench::to_csv(report);
    if (!out) {
      std::cerr << "sonde bench: cannot write " << o.csv_path << "\n";
      return kFailed;
    }
  }
  if (!o.svg_dir.empty()) {
    fs::create_directories(o.svg_dir, ec);
    if (std::string e = bench::write_svgs(report, o.svg_dir); !e.empty()) {
      std::cerr << "sonde bench: " << e << "\n";
      return kFailed;
    }
  }
  return failed ? kFailed : kOk;
}

void setup_bench(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<BenchOptions>();
  app.add_flag("--quick", o->quick, "3 loops of 100,000 calls (under a minute)");
  app.add_option("--json", o->json_path, "write every result and the machine as JSON");
  app.add_option("--csv", o->csv_path, "write one CSV row per configuration");
  app.add_option("--svg-dir", o->svg_dir, "write icw.svg (and depth.svg) here");
  app.add_option("--loops", o->loops, "fresh processes per configuration (default 10, quick 3)");
  app.add_option("--calls", o->calls,
                 "calls per loop and thread (default 1,000,000, quick 100,000)");
  app.add_option("--depth", o->depth, "recursion depth (default 10)");
  app.add_option("--method-time", o->method_time_ns,
                 "busy-wait at the deepest level, ns (default 0)");
  app.add_option("--threads", o->threads, "driver threads (default 1)");
  app.add_option("--warmup", o->warmup, "fraction of each loop's calls discarded (default 0.5)");
  app.add_option("--experiment", o->experiments,
                 "stress (default), low-load, depth, threads, sync; repeatable")
      ->delimiter(',');
  app.add_option("--only", o->only, "comma list of configuration names to run (T always runs)");
  app.add_option("--bench-dir", o->bench_dir, "directory of the bench_moobench_* binaries");
  app.add_option("--monitor-lib", o->monitor_lib, "libsonde.so to preload for the automatic path");
  app.add_option("--work-dir", o->work_dir, "keep the last loop's files here (default: temporary)");
  app.callback([o, &exit_code] { exit_code = run_bench(*o); });
}

SONDE_COMMAND("bench", "MooBench overhead benchmark: I/C/W per monitored call, peers side by side",
              setup_bench);

}  // namespace
}  // namespace sonde::cli
