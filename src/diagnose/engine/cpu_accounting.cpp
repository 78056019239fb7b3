#include "diagnose/engine/cpu_accounting.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sonde::diagnose::engine {
namespace {

namespace fs = std::filesystem;

struct ProcessTimes {
  pid_t parent = 0;
  double own_s = 0;       // its user + system time
  double children_s = 0;  // its reaped children's
  double cpu_s() const { return own_s + children_s; }
};

// "<pid> (<comm>) <state> <ppid> ... <utime> <stime> <cutime> <cstime>
// ...": comm may hold spaces and parentheses, so the fields are counted
// from the last ')'. cutime/cstime hold the children it reaped: a
// database backend that ends inside the phase moves its time there.
bool read_process(const fs::path& stat_file, double ticks, ProcessTimes& out) {
  std::ifstream in(stat_file);
  std::string line;
  if (!std::getline(in, line)) return false;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  long long ppid = 0;
  rest >> state >> ppid;
  // Fields 5..13 (pgrp .. cmajflt), then utime (14) and stime (15).
  std::string skip;
  for (int i = 5; i <= 13; ++i) rest >> skip;
  unsigned long long utime = 0, stime = 0;
  long long cutime = 0, cstime = 0;  // signed in proc(5)
  if (!(rest >> utime >> stime >> cutime >> cstime)) return false;
  out.parent = static_cast<pid_t>(ppid);
  out.own_s = static_cast<double>(utime + stime) / ticks;
  out.children_s = static_cast<double>(std::max(0LL, cutime) + std::max(0LL, cstime)) / ticks;
  return true;
}

// The other processes' time between the snapshots (CpuAccount's comment):
// everything they have now, minus what they had before. A process that
// ended counts in `before` only where its time reappears in a reaper's
// reaped-children time: the kernel adds a reaped process's whole time to
// its reaper, and the reaper is its parent, or, when the parent ended
// first, the nearest subreaper or init, so any surviving ancestor.
// Checking the parent alone counted an orphan's whole life as time spent
// inside the phase (259 % of the machine when a tree of another user's
// processes ended during tc06's experiment). Each reaper's growth is a
// budget: two ended processes cannot both be found in the same seconds.
double other_core_s(const CpuSnapshot& before, const CpuSnapshot& after) {
  double now = 0, then = 0;
  for (const auto& [pid, t] : after.others) now += t.own_s + t.children_s;
  std::map<pid_t, double> reaped_since;  // surviving process -> growth of its children's time
  for (const auto& [pid, t] : before.others) {
    if (const auto later = after.others.find(pid); later != after.others.end()) {
      then += t.own_s + t.children_s;
      reaped_since[pid] = std::max(0.0, later->second.children_s - t.children_s);
    }
  }
  // Two readings, each rounded down to a tick.
  const double slack = before.tick_s + after.tick_s;
  for (const auto& [pid, t] : before.others) {
    if (after.others.count(pid)) continue;
    const double had = t.own_s + t.children_s;
    std::set<pid_t> visited{pid};  // a corrupt /proc could hold a cycle
    for (pid_t up = t.parent; up > 0 && visited.insert(up).second;) {
      if (auto reaper = reaped_since.find(up);
          reaper != reaped_since.end() && reaper->second >= had - slack) {
        reaper->second = std::max(0.0, reaper->second - had);
        then += had;
        break;
      }
      const auto ancestor = before.others.find(up);
      if (ancestor == before.others.end()) break;
      up = ancestor->second.parent;
    }
  }
  return now - then;
}

}  // namespace

CpuSnapshot take_cpu_snapshot(const std::vector<pid_t>& roots, const std::string& proc_root,
                              long ticks_per_second) {
  CpuSnapshot s;
  const double ticks = static_cast<double>(
      ticks_per_second > 0 ? ticks_per_second : std::max(1L, ::sysconf(_SC_CLK_TCK)));
  s.tick_s = 1 / ticks;
  {
    std::ifstream in(proc_root + "/stat");
    std::string label;
    // user nice system idle iowait irq softirq steal (guest is in user).
    // Busy: user, nice, system and steal. Interrupts are left out: the
    // kernel bills loopback TCP between load driver, system under test and
    // database to softirq time, not to the processes.
    unsigned long long v[8] = {};
    in >> label;
    for (auto& x : v) in >> x;
    if (!in || label != "cpu") {
      s.error = proc_root + "/stat: no \"cpu\" line to read";
      return s;
    }
    unsigned long long total = 0;
    for (auto x : v) total += x;
    s.machine_total_s = static_cast<double>(total) / ticks;
    // Steal (a hypervisor running other guests on our CPUs) is busy: it is
    // time another tenant took.
    s.machine_busy_s = static_cast<double>(v[0] + v[1] + v[2] + v[7]) / ticks;
  }
  std::map<pid_t, ProcessTimes> all;
  std::error_code ec;
  for (fs::directory_iterator it(proc_root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto digit = [](unsigned char c) { return std::isdigit(c) != 0; };
    if (name.empty() || !std::all_of(name.begin(), name.end(), digit)) continue;
    ProcessTimes t;
    // A process that ended between listing and reading is simply not there.
    if (read_process(it->path() / "stat", ticks, t)) all[static_cast<pid_t>(std::stol(name))] = t;
  }
  if (ec) {
    s.error = proc_root + ": cannot list the processes: " + ec.message();
    return s;
  }
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, t] : all) children.emplace(t.parent, pid);
  std::vector<pid_t> todo(roots.begin(), roots.end());
  std::set<pid_t> seen;
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    if (pid <= 0 || !seen.insert(pid).second) continue;
    if (auto it = all.find(pid); it != all.end()) s.ours[pid] = it->second.cpu_s();
    auto [from, to] = children.equal_range(pid);
    for (auto c = from; c != to; ++c) todo.push_back(c->second);
  }
  for (const auto& [pid, t] : all) {
    if (!s.ours.count(pid)) s.others[pid] = {t.parent, t.own_s, t.children_s};
  }
  s.valid = true;
  return s;
}

CpuAccount account_cpu(const CpuSnapshot& before, const CpuSnapshot& after) {
  CpuAccount a;
  if (!before.valid || !after.valid) {
    a.error = !before.valid ? before.error : after.error;
    return a;
  }
  a.capacity_core_s = std::max(0.0, after.machine_total_s - before.machine_total_s);
  a.busy_core_s = std::max(0.0, after.machine_busy_s - before.machine_busy_s);
  // Sums, not per process: a process that ended inside the phase left its
  // time in its parent's reaped-children counters (both in the trees).
  double ours_before = 0, ours_after = 0;
  for (const auto& entry : before.ours) ours_before += entry.second;
  for (const auto& entry : after.ours) ours_after += entry.second;
  a.ours_core_s = std::max(0.0, ours_after - ours_before);
  // Other from the processes too, not as busy - ours: the kernel's per-CPU
  // ticks and its per-process times disagree (scenario tc15's load test:
  // the diagnosis' processes 10.6 core-s, the busy ticks 9.4), which would
  // hide a neighbour of that size.
  a.other_core_s = std::max(0.0, other_core_s(before, after));
  a.valid = a.capacity_core_s > 0;
  if (!a.valid) a.error = "no CPU time passed between the two readings";
  return a;
}

nlohmann::json CpuAccount::to_json() const {
  if (!valid) return {{"error", error}};
  return {{"capacity_core_s", capacity_core_s},
          {"busy_core_s", busy_core_s},
          {"diagnosis_core_s", ours_core_s},
          {"other_core_s", other_core_s},
          {"other_share", other_share()}};
}

}  // namespace sonde::diagnose::engine
