// Soak of `sonde collect`: monitored processes stream to one collector over
// loopback TCP for a fixed time, PARALLEL at a time, each replaced as soon
// as it exits; the collector's resident memory is sampled every 5 s.
//
//   bench_collect_soak SONDE WORKLOAD OUT_DIR [SECONDS=600] [PARALLEL=8] [ITERATIONS=2000]
//                      [RATE=0]
//
// RATE caps the processes started per second (0: as fast as they finish).
// A collector that cannot keep up holds producers back (TCP flow control,
// then its accept queue); a producer's TCP writer that cannot send for 5 s
// reconnects and, past its buffer, counts records as lost. So every
// producer prints its summary into OUT_DIR/producers/N.err, and the soak
// checks the accounting: received + counted lost = produced, exactly.
//
// WORKLOAD is tests/monitor/programs/test_workload (2 threads, depth 3,
// "throw"): its record and trace counts follow from its arguments, so the
// soak checks that the collector received and stored every record of every
// process, exactly. For runs of 120 s or more it also checks that memory is
// bounded: the largest sample of the last quarter may exceed the largest of
// the second quarter (after warm-up) by at most 20 % + 16 MiB. Prints a
// report; exit 0 when every check holds, 1 otherwise, 2 on a usage or
// start-up error (docs/RELIABILITY.md).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kThreads = 2, kDepth = 3;

pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& env,
            const posix_spawn_file_actions_t* actions) {
  std::vector<char*> argv, envp;
  std::vector<std::string> a = args, e = env;
  for (auto& s : a) argv.push_back(s.data());
  for (auto& s : e) envp.push_back(s.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], actions, nullptr, argv.data(), envp.data()) != 0) return -1;
  return pid;
}

// VmRSS of `pid` in KiB, 0 if unreadable.
long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return 0;
}

// Reads the collector's stderr until it names its port.
int read_port(FILE* err) {
  char line[512];
  while (std::fgets(line, sizeof line, err) != nullptr) {
    const std::string s(line);
    const std::string tag = "listening on ";
    const size_t at = s.find(tag);
    if (at == std::string::npos) continue;
    const size_t colon = s.find(':', at + tag.size());
    if (colon != std::string::npos) return std::atoi(s.c_str() + colon + 1);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 8) {
    std::fprintf(stderr,
                 "usage: bench_collect_soak SONDE WORKLOAD OUT_DIR [SECONDS] [PARALLEL] "
                 "[ITERATIONS] [RATE]\n");
    return 2;
  }
  const std::string sonde = argv[1], workload = argv[2];
  const fs::path out = argv[3];
  const int seconds = argc > 4 ? std::atoi(argv[4]) : 600;
  const int parallel = argc > 5 ? std::atoi(argv[5]) : 8;
  const int iterations = argc > 6 ? std::atoi(argv[6]) : 2000;
  const double rate = argc > 7 ? std::atof(argv[7]) : 0;
  if (seconds <= 0 || parallel <= 0 || iterations <= 0 || rate < 0) {
    std::fprintf(stderr,
                 "bench_collect_soak: SECONDS, PARALLEL and ITERATIONS must be > 0, RATE >= 0\n");
    return 2;
  }
  fs::remove_all(out);
  fs::create_directories(out / "producers");

  // The collector, its stderr through a pipe (for the port, then drained).
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 2;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  const pid_t collector =
      spawn({sonde, "collect", "--listen", "127.0.0.1:0", "--out", (out / "store").string()},
            {"PATH=/usr/bin:/bin"}, &actions);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (collector < 0) {
    std::fprintf(stderr, "bench_collect_soak: cannot start %s\n", sonde.c_str());
    return 2;
  }
  FILE* err = fdopen(pipe_fds[0], "r");
  const int port = read_port(err);
  if (port <= 0) {
    std::fprintf(stderr, "bench_collect_soak: the collector did not report its port\n");
    kill(collector, SIGKILL);
    return 2;
  }
  std::string collector_log;
  std::thread drain([&] {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, err)) > 0) collector_log.append(buf, n);
  });

  const std::vector<std::string> args = {workload, std::to_string(kThreads),
                                         std::to_string(iterations), std::to_string(kDepth),
                                         "throw"};
  const std::vector<std::string> env = {"SONDE_WRITER=tcp",
                                        "SONDE_TCP_PORT=" + std::to_string(port),
                                        "SONDE_SUMMARY=true", "PATH=/usr/bin:/bin"};
  std::vector<pid_t> running;
  uint64_t launched = 0, failed = 0;
  std::vector<std::pair<double, long>> samples;  // (seconds, KiB)
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  auto next_sample = start;
  auto reap = [&](bool block) {
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      const pid_t r = waitpid(*it, &status, block ? 0 : WNOHANG);
      if (r == *it) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  };
  while (Clock::now() < deadline) {
    reap(false);
    while (static_cast<int>(running.size()) < parallel) {
      if (rate > 0 && static_cast<double>(launched) >=
                          rate * std::chrono::duration<double>(Clock::now() - start).count()) {
        break;  // paced: not yet time for the next one
      }
      const std::string err_file =
          (out / "producers" / (std::to_string(launched) + ".err")).string();
      posix_spawn_file_actions_t producer_io;
      posix_spawn_file_actions_init(&producer_io);
      posix_spawn_file_actions_addopen(&producer_io, 2, err_file.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const pid_t p = spawn(args, env, &producer_io);
      posix_spawn_file_actions_destroy(&producer_io);
      if (p < 0) {
        ++failed;
        break;
      }
      running.push_back(p);
      ++launched;
    }
    if (Clock::now() >= next_sample) {
      samples.emplace_back(std::chrono::duration<double>(Clock::now() - start).count(),
                           rss_kib(collector));
      next_sample += std::chrono::seconds(5);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  reap(true);
  // Let the collector take the last bytes, then stop it as a user would.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Not a steady-state sample: the collector is taking every connection
  // still queued at once (up to --max-clients open), so it stays out of
  // the growth check and is reported on its own.
  const long final_rss = rss_kib(collector);
  kill(collector, SIGINT);
  int status = 0;
  waitpid(collector, &status, 0);
  drain.join();
  std::fclose(err);

  // What each process sends (tests/monitor/programs/workload.cpp, "throw").
  const uint64_t traces = uint64_t{kThreads} * (2 * uint64_t(iterations) + 1);
  const uint64_t calls = uint64_t{kThreads} * uint64_t(iterations) * (kDepth + 2) + kThreads;
  const uint64_t records = traces + 2 * calls + 1;
  std::ifstream in(out / "store" / "collect-stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in, nullptr, false);
  if (stats.is_discarded()) {
    std::fprintf(stderr, "bench_collect_soak: no readable collect-stats.json; collector said:\n%s",
                 collector_log.c_str());
    return 1;
  }
  auto count = [&](const char* key) { return stats.value(key, uint64_t{0}); };
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && failed == 0;
  auto check = [&](const char* what, uint64_t got, uint64_t want) {
    const bool good = got == want;
    ok = ok && good;
    std::printf("  %-22s %14llu  expected %14llu  %s\n", what, static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(want), good ? "ok" : "MISMATCH");
  };
  std::printf(
      "soak: %d s, %d processes at a time (at most %.1f started per second; 0 = no cap), "
      "%llu processes (%llu failed), collector exit %d\n",
      seconds, parallel, rate, static_cast<unsigned long long>(launched),
      static_cast<unsigned long long>(failed), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  // What the producers said: events (= records) they counted as lost, and
  // how often their writers reconnected.
  uint64_t lost = 0, reconnects = 0, summaries = 0;
  for (uint64_t n = 0; n < launched; ++n) {
    std::ifstream producer_err(out / "producers" / (std::to_string(n) + ".err"));
    std::string line;
    while (std::getline(producer_err, line)) {
      unsigned long long written = 0, dropped = 0;
      if (std::sscanf(line.c_str(), "sonde: %llu events written, %llu lost", &written, &dropped) ==
          2) {
        lost += dropped;
        ++summaries;
      }
      if (line.find("tcp writer: reconnected") != std::string::npos) ++reconnects;
    }
  }
  std::printf(
      "  producers: %llu summaries, %llu records counted as lost by them, %llu "
      "reconnects\n",
      static_cast<unsigned long long>(summaries), static_cast<unsigned long long>(lost),
      static_cast<unsigned long long>(reconnects));
  check("producer summaries", summaries, launched);
  check("clients", count("clients_total"), launched + reconnects);
  check("received + lost", count("received") + lost, launched * records);
  check("records stored", count("stored"), count("received"));
  check("records rejected", count("rejected"), 0);
  if (lost == 0 && reconnects == 0) {
    check("traces", count("traces"), launched * traces);
    check("invalid traces", count("invalid_traces"), 0);
  } else {
    // A reconnect splits each thread's open trace in two: both halves are
    // invalid; lost records break their traces too.
    const uint64_t explained = 2 * kThreads * reconnects + lost;
    const uint64_t invalid = count("invalid_traces");
    ok = ok && invalid <= explained;
    std::printf("  %-22s %14llu  at most       %14llu  %s\n", "invalid traces",
                static_cast<unsigned long long>(invalid),
                static_cast<unsigned long long>(explained),
                invalid <= explained ? "ok" : "MISMATCH");
  }
  check("unserved connections", count("unserved_connections"), 0);
  check("unserved bytes", count("unserved_bytes"), 0);

  std::printf("  collector RSS (MiB) every 5 s:");
  for (const auto& [t, kib] : samples) std::printf(" %.0f", static_cast<double>(kib) / 1024);
  std::printf("; after the producers: %.0f (peak open clients %llu)\n",
              static_cast<double>(final_rss) / 1024,
              static_cast<unsigned long long>(count("peak_open_clients")));
  if (seconds >= 120 && samples.size() >= 8) {
    const size_t q = samples.size() / 4;
    auto max_in = [&](size_t from, size_t to) {
      long m = 0;
      for (size_t i = from; i < to; ++i) m = std::max(m, samples[i].second);
      return m;
    };
    const long warm = max_in(q, 2 * q), last = max_in(3 * q, samples.size());
    const bool bounded = static_cast<double>(last) <= 1.2 * static_cast<double>(warm) + 16 * 1024;
    ok = ok && bounded;
    std::printf(
        "  memory while producing: max %.1f MiB in the second quarter, %.1f MiB in the "
        "last: %s\n",
        static_cast<double>(warm) / 1024, static_cast<double>(last) / 1024,
        bounded ? "bounded" : "GROWING");
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
