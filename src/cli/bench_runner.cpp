#include "cli/bench_runner.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "collect/collector.hpp"
#include "collect/record_listener.hpp"
#include "format/log_reader.hpp"
#include "format/schema.hpp"

extern char** environ;

namespace sonde::cli::bench {
namespace {

namespace fs = std::filesystem;

// Counts the flow records of a trace (what the workload produces); other
// records (metadata, samplers) are not the workload's.
class FlowCounter : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    if (r.schema == nullptr) return true;
    const std::string& c = r.schema->class_name;
    if (c == format::kieker_class::kTraceMetadata || c == format::kieker_class::kBeforeOperation ||
        c == format::kieker_class::kAfterOperation ||
        c == format::kieker_class::kAfterOperationFailed) {
      ++count;
    }
    return true;
  }
  uint64_t count = 0;
};

uint64_t directory_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  }
  return total;
}

std::vector<std::string> child_environment(const Config& c, const std::string& logs) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    // The configuration alone decides how the driver is monitored.
    if (v.rfind("SONDE_", 0) == 0 || v.rfind("LD_PRELOAD=", 0) == 0) continue;
    env.emplace_back(v);
  }
  env.push_back("SONDE_SUMMARY=false");
  env.push_back("SONDE_OUT=" + logs);
  for (const auto& [k, v] : c.env) env.push_back(k + "=" + v);
  if (!c.preload.empty()) env.push_back("LD_PRELOAD=" + c.preload);
  return env;
}

// Runs argv with env, stdout/stderr into `log`. Returns "" or what went wrong.
std::string spawn_and_wait(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::string& log) {
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, a[0], &fa, nullptr, a.data(), e.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return "cannot start " + argv[0] + ": " + std::strerror(rc);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exit status " + std::to_string(WEXITSTATUS(status));
  return argv[0] + " failed (" + why + "): " + text.str().substr(0, 2000);
}

std::map<std::string, std::string> read_key_values(const fs::path& p) {
  std::map<std::string, std::string> kv;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

uint64_t as_u64(const std::map<std::string, std::string>& kv, const std::string& key) {
  const auto it = kv.find(key);
  return it == kv.end() ? 0 : std::stoull(it->second);
}

// Reads durations.bin: each thread's timed calls in turn. Converts to ns per
// monitored call and bins each thread's calls by their cumulative time.
std::string read_durations(const fs::path& p, const Workload& w, uint64_t timed_per_thread,
                           LoopResult* r) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "cannot read " + p.string();
  std::vector<uint64_t> raw(timed_per_thread * static_cast<uint64_t>(w.threads));
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size() * 8));
  if (static_cast<uint64_t>(in.gcount()) != raw.size() * 8) {
    return p.string() + " holds fewer durations than the driver reported";
  }
  r->per_call_ns.resize(raw.size());
  double sum = 0;
  const double depth = w.depth;
  for (size_t i = 0; i < raw.size(); ++i) {
    const double v = static_cast<double>(raw[i]) / depth;
    r->per_call_ns[i] = static_cast<float>(v);
    sum += v;
  }
  r->mean_ns = raw.empty() ? 0 : sum / static_cast<double>(raw.size());
  // Calls run back to back, so a call's end is the sum of the durations
  // before it (the timestamps in between add a little, the same in every
  // configuration).
  for (int t = 0; t < w.threads; ++t) {
    uint64_t clock = 0;
    for (uint64_t i = 0; i < timed_per_thread; ++i) {
      clock += raw[static_cast<size_t>(t) * timed_per_thread + i];
      const size_t bin = static_cast<size_t>(clock / 1000000000ull);
      if (r->traces_per_s.size() <= bin) r->traces_per_s.resize(bin + 1, 0.0);
      r->traces_per_s[bin] += 1;
    }
  }
  return "";
}

// The receiving end of a TCP configuration, on its own thread: a listener
// that counts flow records (kTcp), or the collector of `sonde collect`
// reconstructing and indexing traces live (kCollect), whose per-client log
// is read back afterwards so that records stored can be checked exactly.
class Receiver {
 public:
  ~Receiver() { stop_thread(); }

  std::string start(Sink sink, const fs::path& work) {
    collect::ListenerOptions lo;
    lo.port = 0;
    lo.stop_after_connections = 1;
    if (is_collector(sink)) {
      collect::CollectorOptions co;
      co.out = (work / "collect").string();
      co.reduce = sink == Sink::kCollectReduce;
      co.listen = lo;
      collector_ = std::make_unique<collect::Collector>(co);
      if (std::string e = collector_->open(); !e.empty()) return "collector: " + e;
      port_ = collector_->port();
    } else {
      listener_ = std::make_unique<collect::RecordListener>(counter_, lo);
      if (std::string e = listener_->open(); !e.empty()) return "TCP receiver: " + e;
      port_ = listener_->port();
    }
    thread_ = std::thread([this] {
      if (collector_) {
        collector_->run(stop_);
      } else {
        listener_->run(stop_);
      }
      done_ = true;
    });
    return "";
  }
  bool started() const { return thread_.joinable(); }
  uint16_t port() const { return port_; }

  // The monitor closes its connection at exit and run() returns once its one
  // connection came and went; gives the receiver time to drain it.
  void finish(LoopResult* r) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done_ && r->error.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const bool closed = done_;
    stop_thread();
    const char* who = collector_ ? "collector: " : "TCP receiver: ";
    if (!closed && r->error.empty()) {
      r->error = std::string(who) + "the monitor's connection never closed";
    }
    if (listener_) {
      r->records_read = counter_.count;
      for (const auto& client : listener_->clients()) {
        r->bytes += client.bytes;
        if (!client.error.empty() && r->error.empty()) r->error = who + client.error;
      }
      return;
    }
    if (std::string e = collector_->finish(); !e.empty() && r->error.empty()) r->error = who + e;
    // log_file is relative to the collector's directory ("log/client-N.sonde").
    const fs::path log_dir = fs::path(collector_->stats_path()).parent_path();
    for (const auto& client : collector_->clients()) {
      r->traces_reconstructed += client.traces;
      r->traces_invalid += client.invalid_traces;
      r->reduced_traces += client.reduced_traces;
      if (!client.record.error.empty() && r->error.empty()) r->error = who + client.record.error;
      if (client.record.log_file.empty()) continue;
      const fs::path log = log_dir / client.record.log_file;
      std::error_code ec;
      const auto size = fs::file_size(log, ec);
      r->bytes += ec ? 0 : size;
      const format::LogReadStats stats = format::read_log(log.string(), counter_);
      if (!stats.ok && r->error.empty()) {
        r->error = "reading back " + log.string() + ": " +
                   (stats.errors.empty() ? std::string("failed") : stats.errors.front());
      }
    }
    r->records_read = counter_.count;
  }

 private:
  void stop_thread() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  FlowCounter counter_;
  std::unique_ptr<collect::RecordListener> listener_;
  std::unique_ptr<collect::Collector> collector_;
  std::atomic<bool> stop_{false}, done_{false};
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace

LoopResult run_loop(const Config& config, const Workload& w, const std::string& bench_dir,
                    const std::string& work_dir) {
  LoopResult r;
  const fs::path work(work_dir);
  const fs::path logs = work / "logs";
  Config c = config;
  auto substitute = [&](std::vector<std::string> args) {
    for (auto& a : args) {
      for (auto at = a.find("{work}"); at != std::string::npos; at = a.find("{work}")) {
        a.replace(at, 6, work.string());
      }
    }
    return args;
  };
  for (const auto& cmd : c.before) {
    if (std::string e = spawn_and_wait(substitute(cmd), child_environment(c, logs.string()),
                                       (work / "before.txt").string());
        !e.empty()) {
      r.error = e;
      return r;
    }
  }

  // TCP: a receiver on a free loopback port (counting, or a live collector).
  Receiver receiver;
  if (c.sink == Sink::kTcp || is_collector(c.sink)) {
    if (std::string e = receiver.start(c.sink, work); !e.empty()) {
      r.error = e;
      return r;
    }
    c.env.emplace_back("SONDE_TCP_PORT", std::to_string(receiver.port()));
    // sonde's native stream unless the configuration names Kieker's frames
    // (docs/bench.md); never the caller's environment.
    const bool named = std::any_of(c.env.begin(), c.env.end(),
                                   [](const auto& kv) { return kv.first == "SONDE_TCP_PROTOCOL"; });
    if (!named) c.env.emplace_back("SONDE_TCP_PROTOCOL", "native");
  }

  const std::vector<std::string> env = child_environment(c, logs.string());
  std::vector<std::string> argv = substitute(c.wrapper);
  argv.push_back((fs::path(bench_dir) / c.binary).string());
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"--calls", std::to_string(w.calls)},
           {"--depth", std::to_string(w.depth)},
           {"--method-time", std::to_string(w.method_time_ns)},
           {"--threads", std::to_string(w.threads)},
           {"--warmup", std::to_string(w.warmup)},
           {"--out", work.string()}}) {
    argv.push_back(k);
    argv.push_back(v);
  }
  r.error = spawn_and_wait(argv, env, (work / "output.txt").string());
  for (const auto& cmd : c.after) {
    std::string e = spawn_and_wait(substitute(cmd), env, (work / "after.txt").string());
    if (r.error.empty()) r.error = e;
  }

  if (receiver.started()) receiver.finish(&r);
  if (!r.error.empty()) return r;

  const auto kv = read_key_values(work / "result.txt");
  const uint64_t timed_per_thread = as_u64(kv, "timed_calls");
  r.timed_calls = timed_per_thread * static_cast<uint64_t>(w.threads);
  r.elapsed_ns = as_u64(kv, "elapsed_ns");
  r.events_recorded = as_u64(kv, "events_recorded");
  r.events_written = as_u64(kv, "events_written");
  r.events_dropped = as_u64(kv, "events_dropped");
  if (c.sonde && as_u64(kv, "monitored") != 1) {
    r.error = "libsonde was not loaded into the driver";
    return r;
  }
  if (std::string e = read_durations(work / "durations.bin", w, timed_per_thread, &r); !e.empty()) {
    r.error = e;
    return r;
  }

  if (c.sink == Sink::kPeerDir) r.bytes = directory_bytes(work / "peer");
  if (c.sink == Sink::kLog) {
    r.bytes = directory_bytes(logs);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(logs, ec)) {
      FlowCounter counter;
      const format::LogReadStats stats = format::read_log(entry.path().string(), counter);
      if (!stats.ok) {
        r.error = "reading back " + entry.path().string() + ": " +
                  (stats.errors.empty() ? std::string("failed") : stats.errors.front());
        return r;
      }
      r.records_read += counter.count;
    }
    if (ec) r.error = "no log in " + logs.string() + ": " + ec.message();
  }
  return r;
}

}  // namespace sonde::cli::bench
