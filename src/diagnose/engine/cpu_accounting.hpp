// Who used the machine's CPUs during an experiment's stable phase: the
// diagnosis (this process and its descendants: the load driver, `sonde
// run`, the system under test, a broker it started) and a database server
// it started, against everything else. A diagnosis measures how the system
// under test queues for the CPU; other processes on a shared machine
// change that (a busy neighbour saturates the CPUs and hides a One Lane
// Bridge behind CPU queueing), so the report warns when they took a large
// share (docs/diagnose/experiment-data.md, "cpu_accounting").
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sonde::diagnose::engine {

// Cumulative CPU counters at one instant, in seconds.
struct CpuSnapshot {
  bool valid = false;
  std::string error;           // why not valid (/proc unreadable)
  double machine_total_s = 0;  // all CPUs, idle included (cores x uptime)
  double machine_busy_s = 0;   // all CPUs: user, nice, system, steal
  // process -> its user + system seconds, with those of its reaped children
  std::map<pid_t, double> ours;
  // Every other process: its parent, its own time and its reaped children's.
  struct Other {
    pid_t parent = 0;
    double own_s = 0;
    double children_s = 0;
  };
  std::map<pid_t, Other> others;
  double tick_s = 0;  // the resolution of the times above (1 / CLK_TCK)
};

// Reads `proc_root`/stat and `proc_root`/<pid>/stat of every process in the
// trees below `roots` (a root and its descendants by parent pid).
// `ticks_per_second` 0: sysconf(_SC_CLK_TCK); tests pass a fixed value.
CpuSnapshot take_cpu_snapshot(const std::vector<pid_t>& roots,
                              const std::string& proc_root = "/proc", long ticks_per_second = 0);

// Between two snapshots, in core-seconds. Ours and other are differences
// of sums: a process that started in between counts from zero, one that
// ended and was reaped stays counted in its parent's reaped-children time
// (an orphan's in init's). A process that left the trees (a daemon that
// double-forks) counts as other from then on. Another process that ended
// in between counts from the first snapshot where its time reappears in
// the reaped-children time of a surviving ancestor (its parent, or the
// init or subreaper that adopted it when the parent ended first). One
// whose time lands in no reaper we can see (its parent ignored SIGCHLD,
// or the reaper lives outside our /proc) is left out of both sums, not
// subtracted: its time before the first snapshot would otherwise cancel a
// busy neighbour's (seen in a parallel test run: 0 core-s other while a
// neighbour spun).
struct CpuAccount {
  bool valid = false;
  std::string error;
  double capacity_core_s = 0;  // all CPUs' time: cores x wall time
  double busy_core_s = 0;
  double ours_core_s = 0;
  double other_core_s = 0;  // the other processes' (and kernel threads') time
  double other_share() const { return capacity_core_s > 0 ? other_core_s / capacity_core_s : 0; }
  nlohmann::json to_json() const;
};

CpuAccount account_cpu(const CpuSnapshot& before, const CpuSnapshot& after);

// From this share of the machine's CPU time taken by other processes on,
// the engine and the report warn: on 2 cores, one busy neighbour is 0.5.
inline constexpr double kBusyMachineShare = 0.25;

}  // namespace sonde::diagnose::engine
