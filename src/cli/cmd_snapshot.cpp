// `sonde snapshot PID`: asks a process running with the flight recorder
// (flight = on, docs/flight-recorder.md) for a snapshot by sending it its
// flight_signal, and waits until the snapshot file is complete. The signal
// and the log directory are read from the process's environment
// (SONDE_FLIGHT_SIGNAL, SONDE_OUT) unless given; a config file's values
// are not visible from outside, so give --signal and --dir for those.
//
// Exit status: 0 a new snapshot was written (its path is printed); 1 the
// process is gone, cannot be signalled, or wrote none within --timeout;
// 2 usage error.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include "cli/command.hpp"
#include "format/native_reader.hpp"

namespace sonde::cli {
namespace {

namespace fs = std::filesystem;

struct SnapshotOptions {
  int pid = 0;
  int signal = -1;  // -1: from the environment, else 12 (SIGUSR2)
  std::string dir;  // empty: from the environment
  double timeout_s = 10;
};

// The value of `name` in /proc/PID/environ, or "".
std::string environ_value(int pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string entry;
  while (std::getline(in, entry, '\0')) {
    if (entry.compare(0, name.size() + 1, name + "=") == 0) return entry.substr(name.size() + 1);
  }
  return "";
}

// The process's snapshot files in `dir`: APPLICATION-PID.snapshot-N.sonde.
std::set<std::string> snapshots_of(const std::string& dir, int pid) {
  std::set<std::string> out;
  std::error_code ec;
  const std::string marker = "-" + std::to_string(pid) + ".snapshot-";
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.find(marker) != std::string::npos && e.path().extension() == ".sonde")
      out.insert(e.path().string());
  }
  return out;
}

// A snapshot is complete when its END item is there.
bool complete(const std::string& path) {
  format::NativeVisitor ignore;
  const format::NativeReadResult r = format::read_native_file(path, ignore);
  return r.ok && r.clean_end;
}

int run_snapshot(const SnapshotOptions& o) {
  const std::string proc = "/proc/" + std::to_string(o.pid);
  if (!fs::exists(proc)) {
    std::cerr << "sonde snapshot: no process " << o.pid << "\n";
    return kFailed;
  }
  int sig = o.signal;
  if (sig < 0) {
    const std::string v = environ_value(o.pid, "SONDE_FLIGHT_SIGNAL");
    sig = v.empty() ? SIGUSR2 : 0;
    if (!v.empty() && !parse_number(v, &sig)) {
      std::cerr << "sonde snapshot: process " << o.pid << " has SONDE_FLIGHT_SIGNAL='" << v
                << "', not a signal number\n";
      return kFailed;
    }
  }
  if (sig <= 0) {
    std::cerr << "sonde snapshot: process " << o.pid
              << " has no flight_signal (0); it can only snapshot through sonde_snapshot()\n";
    return kFailed;
  }
  std::string dir = o.dir;
  if (dir.empty()) dir = environ_value(o.pid, "SONDE_OUT");
  if (dir.empty()) dir = "sonde-logs";
  if (fs::path(dir).is_relative()) {
    std::error_code ec;
    const fs::path cwd = fs::read_symlink(proc + "/cwd", ec);
    if (!ec) dir = (cwd / dir).string();
  }
  const std::set<std::string> before = snapshots_of(dir, o.pid);
  if (::kill(o.pid, sig) != 0) {
    std::cerr << "sonde snapshot: cannot signal process " << o.pid << ": " << std::strerror(errno)
              << "\n";
    return kFailed;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    for (const std::string& path : snapshots_of(dir, o.pid)) {
      if (before.count(path) == 0 && complete(path)) {
        std::cout << path << "\n";
        return kOk;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "sonde snapshot: sent signal " << sig << " to process " << o.pid
            << ", but no new snapshot appeared in " << dir << " within " << o.timeout_s
            << " s (is it running with flight = on? has it written flight_max_snapshots already? its "
               "summary line at exit says)\n";
  return kFailed;
}

}  // namespace

SONDE_COMMAND("snapshot", "Ask a process running the flight recorder for a snapshot",
              [](CLI::App& app, int& exit_code) {
                auto o = std::make_shared<SnapshotOptions>();
                app.add_option("pid", o->pid, "the monitored process")->required();
                app.add_option("--signal", o->signal,
                               "its flight_signal (default: SONDE_FLIGHT_SIGNAL of the process, "
                               "else 12, SIGUSR2)");
                app.add_option("--dir", o->dir,
                               "its log directory (default: SONDE_OUT of the process, else "
                               "sonde-logs in its working directory)");
                app.add_option("--timeout", o->timeout_s, "seconds to wait for the snapshot")
                    ->check(CLI::PositiveNumber);
                app.footer(
                    "Prints the new snapshot's path. Exit status: 0 written, 1 failed or none "
                    "within --timeout, 2 usage error.");
                app.callback([o, &exit_code] { exit_code = run_snapshot(*o); });
              });

}  // namespace sonde::cli
