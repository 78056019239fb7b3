// Who used the CPUs during a stable phase: the diagnosis' own process
// trees against the rest of the machine, from a /proc written by the test
// and from the real one with a busy neighbour; and the report's warning.
#include "diagnose/engine/cpu_accounting.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "diagnose/report.hpp"
#include "diagnose_test_support.hpp"

namespace sonde::diagnose::test {
namespace {

namespace fs = std::filesystem;
using engine::account_cpu;
using engine::take_cpu_snapshot;

// A /proc with a "cpu" line (ticks) and processes.
struct FakeProcess {
  int pid;
  std::string comm;
  int ppid;
  long utime, stime;
  long cutime = 0;  // reaped children's user time
};

struct FakeCpuLine {
  long user, idle, iowait, softirq, steal;
};

void write_proc(const fs::path& root, const FakeCpuLine& cpu,
                const std::vector<FakeProcess>& processes) {
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "stat") << "cpu  " << cpu.user << " 0 0 " << cpu.idle << " " << cpu.iowait
                               << " 0 " << cpu.softirq << " " << cpu.steal
                               << " 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
  for (const FakeProcess& p : processes) {
    fs::create_directories(root / std::to_string(p.pid));
    std::ofstream(root / std::to_string(p.pid) / "stat")
        << p.pid << " (" << p.comm << ") S " << p.ppid << " 1 1 0 -1 4194304 10 0 0 0 " << p.utime
        << " " << p.stime << " " << p.cutime << " 0 20 0 4 0 100 1000 100\n";
  }
}

// The account between two states of a written /proc, ours the tree below
// 100 (the reaping tests' shape).
engine::CpuAccount account_between(const fs::path& proc, const FakeCpuLine& cpu_before,
                                   const std::vector<FakeProcess>& before,
                                   const FakeCpuLine& cpu_after,
                                   const std::vector<FakeProcess>& after) {
  write_proc(proc, cpu_before, before);
  const auto first = take_cpu_snapshot({100}, proc.string(), 100);
  EXPECT_TRUE(first.valid) << first.error;
  write_proc(proc, cpu_after, after);
  const auto second = take_cpu_snapshot({100}, proc.string(), 100);
  EXPECT_TRUE(second.valid) << second.error;
  const engine::CpuAccount a = account_cpu(first, second);
  EXPECT_TRUE(a.valid) << a.error;
  return a;
}

TEST(CpuAccounting, OursIsTheTreesBelowTheRootsTheRestIsOther) {
  TempDir d;
  const fs::path proc = fs::path(d.path()) / "proc";
  // 100 ticks per second. Ours: 100 (the engine), its child 101 (a name
  // with spaces and parentheses) with its child 103, and 300 (a database
  // server, a root of its own) with 301. Other: 200.
  write_proc(proc, {1000, 5000, 100, 0, 0},
             {{100, "sonde", 1, 100, 20},
              {101, "shop (a) b)", 100, 50, 0},
              {103, "helper", 101, 7, 0},
              {200, "neighbour", 1, 400, 0},
              {300, "postgres", 1, 30, 0},
              {301, "postgres: backend", 300, 10, 0}});
  const auto before = take_cpu_snapshot({100, 300}, proc.string(), 100);
  ASSERT_TRUE(before.valid) << before.error;
  EXPECT_EQ(before.ours.size(), 5u);  // 100, 101, 103, 300, 301
  EXPECT_DOUBLE_EQ(before.ours.at(101), 0.5);
  // One second on 2 CPUs later (200 ticks): 150 busy ticks (140 user, 10
  // steal; the 30 softirq ticks of loopback traffic are nobody's). Ours:
  // 20 + 30 + 9 (103 ran 2 more ticks and was reaped: 101's cutime) - 7 +
  // 12 (a new child, 102) + 5 + 5 = 74 ticks. Other: the neighbour's 70.
  write_proc(proc, {1140, 5010, 110, 30, 10},
             {{100, "sonde", 1, 110, 30},
              {101, "shop (a) b)", 100, 80, 0, 9},
              {102, "worker", 101, 12, 0},
              {200, "neighbour", 1, 470, 0},
              {300, "postgres", 1, 35, 0},
              {301, "postgres: backend", 300, 15, 0}});
  const auto after = take_cpu_snapshot({100, 300}, proc.string(), 100);
  ASSERT_TRUE(after.valid) << after.error;
  const engine::CpuAccount a = account_cpu(before, after);
  ASSERT_TRUE(a.valid) << a.error;
  EXPECT_DOUBLE_EQ(a.capacity_core_s, 2.0);
  EXPECT_DOUBLE_EQ(a.busy_core_s, 1.5);
  EXPECT_NEAR(a.ours_core_s, 0.74, 1e-9);
  EXPECT_NEAR(a.other_core_s, 0.70, 1e-9);
  EXPECT_NEAR(a.other_share(), 0.35, 1e-9);
  const nlohmann::json j = a.to_json();
  EXPECT_NEAR(j["other_share"].get<double>(), 0.35, 1e-9);
  EXPECT_NEAR(j["diagnosis_core_s"].get<double>(), 0.74, 1e-9);
}

// Other processes that end between the snapshots: one reaped by a parent
// still there counts once (its time since the first snapshot, through the
// parent's reaped-children time); one whose time lands nowhere we can see
// (its parent is gone) is left out rather than subtracted, so it cannot
// cancel a busy neighbour's time (a parallel test run showed 0 core-s
// other while a neighbour spun).
TEST(CpuAccounting, OtherProcessesThatEndBetweenTheSnapshotsNeverCancelANeighbour) {
  TempDir d;
  const fs::path proc = fs::path(d.path()) / "proc";
  // 100 ticks per second. Ours: 100. Other: the neighbour 200 with its
  // child 210; 250, an old process whose parent (900) is not in /proc.
  write_proc(proc, {1000, 5000, 0, 0, 0},
             {{100, "sonde", 1, 100, 0},
              {200, "neighbour", 1, 400, 0},
              {210, "neighbour's child", 200, 20, 0},
              {250, "old busy job", 900, 3000, 0}});
  const auto before = take_cpu_snapshot({100}, proc.string(), 100);
  ASSERT_TRUE(before.valid) << before.error;
  // Later: the neighbour ran 50 ticks and reaped 210, which had run 5 more
  // (its cutime 25); 250 ended and nobody we see reaped it.
  write_proc(proc, {1200, 5100, 0, 0, 0},
             {{100, "sonde", 1, 110, 0}, {200, "neighbour", 1, 450, 0, 25}});
  const auto after = take_cpu_snapshot({100}, proc.string(), 100);
  ASSERT_TRUE(after.valid) << after.error;
  const engine::CpuAccount a = account_cpu(before, after);
  ASSERT_TRUE(a.valid) << a.error;
  EXPECT_NEAR(a.ours_core_s, 0.10, 1e-9);
  // 50 + 5 ticks; a difference of sums would give 0 (475 - 3420 clamped).
  EXPECT_NEAR(a.other_core_s, 0.55, 1e-9);
}

// A tree of other processes that ends between the snapshots: the parent
// ends first, its long-lived child is reparented to init and reaped there,
// so the child's whole time reappears in init's reaped-children time, not
// in its parent's. Only the seconds inside the phase are other (this once
// read 259 % of the machine: the orphan's whole life counted as the
// phase's).
TEST(CpuAccounting, AnOrphanReapedByInitCountsOnlyItsTimeInsideThePhase) {
  TempDir d;
  // 100 ticks per second. Ours: 100. Other: init (1, 10 ticks, 1000 of
  // reaped children), a shell 50 and its old busy child 60 (50,000
  // ticks), a second old process 70 under init (8,000 ticks). Later: 50
  // ended (init reaped its 3 ticks), then 60 ran 40 more ticks and ended,
  // reaped by init; 70 still runs, 30 ticks more. Init's children: 1000 +
  // 3 + 50,040.
  const engine::CpuAccount a = account_between(fs::path(d.path()) / "proc", {1000, 5000, 0, 0, 0},
                                               {{1, "init", 0, 10, 0, 1000},
                                                {100, "sonde", 1, 100, 0},
                                                {50, "shell", 1, 3, 0},
                                                {60, "old busy child", 50, 50000, 0},
                                                {70, "another old job", 1, 8000, 0}},
                                               {1200, 5100, 0, 0, 0},
                                               {{1, "init", 0, 10, 0, 51043},
                                                {100, "sonde", 1, 110, 0},
                                                {70, "another old job", 1, 8030, 0}});
  // 40 + 30 ticks; checking only the parent (gone) gave 500.70 core-s.
  EXPECT_NEAR(a.other_core_s, 0.70, 1e-9);
}

// One reaper's growth cannot vouch for two ended processes: init's
// reaped-children time grew by 500 ticks, the short job's 300 and the 200
// it ran inside the phase, so the second old job (400 ticks), whose time
// reached no reaper (auto-reaped: its parent ignores SIGCHLD), is left out
// and does not cancel the neighbour's.
TEST(CpuAccounting, OneReapersGrowthIsCountedOnce) {
  TempDir d;
  const engine::CpuAccount a = account_between(
      fs::path(d.path()) / "proc", {1000, 5000, 0, 0, 0},
      {{1, "init", 0, 10, 0, 0},
       {100, "sonde", 1, 100, 0},
       {50, "short job", 1, 300, 0},
       {60, "second job", 1, 400, 0},
       {200, "neighbour", 1, 400, 0}},
      {1200, 5100, 0, 0, 0},
      {{1, "init", 0, 10, 0, 500}, {100, "sonde", 1, 110, 0}, {200, "neighbour", 1, 480, 0}});
  // 200 + 80 ticks; vouching for both jobs with the same 500 ticks
  // cancelled the neighbour (0).
  EXPECT_NEAR(a.other_core_s, 2.80, 1e-9);
}

TEST(CpuAccounting, AnUnreadableProcSaysWhy) {
  TempDir d;
  const auto s = take_cpu_snapshot({1}, d.path() + "/nothing", 100);
  EXPECT_FALSE(s.valid);
  EXPECT_NE(s.error.find("/nothing/stat"), std::string::npos) << s.error;
  const engine::CpuAccount a = account_cpu(s, s);
  EXPECT_FALSE(a.valid);
  EXPECT_EQ(a.to_json()["error"], s.error);
}

// A busy loop that is not our descendant: a double fork into its own
// session, as a neighbour on a shared machine. Returns its pid.
pid_t start_neighbour() {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
      ::alarm(30);  // never outlives a test that failed before killing it
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    if (::write(pipe_fds[1], &grandchild, sizeof grandchild) != sizeof grandchild) ::_exit(1);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t neighbour = -1;
  if (::read(pipe_fds[0], &neighbour, sizeof neighbour) != sizeof neighbour) neighbour = -1;
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return neighbour;
}

// The real /proc: a neighbour's busy loop is other, our own busy thread is ours.
TEST(CpuAccounting, ABusyNeighbourIsOtherOurOwnWorkIsOurs) {
  const pid_t neighbour = start_neighbour();
  ASSERT_GT(neighbour, 0);
  const auto before = take_cpu_snapshot({::getpid()});
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    volatile unsigned long spin = 0;
    while (!stop) spin = spin + 1;
  });
  // Until each has had 0.3 s of a CPU (by the kernel's own count, so that a
  // machine busy with other tests only makes this wait longer), at most 20 s.
  const auto cpu_seconds = [](const std::string& stat_file) {
    std::ifstream in(stat_file);
    std::string line;
    std::getline(in, line);
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string field;
    long ticks = 0;
    for (int k = 3; k <= 15 && fields >> field; ++k)
      if (k == 14 || k == 15) ticks += std::stol(field);
    return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  };
  const double ours_at_start = cpu_seconds("/proc/self/stat");
  for (int k = 0; k < 200; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (cpu_seconds("/proc/self/stat") - ours_at_start >= 0.3 &&
        cpu_seconds("/proc/" + std::to_string(neighbour) + "/stat") >= 0.3)
      break;
  }
  stop = true;
  busy.join();
  const auto after = take_cpu_snapshot({::getpid()});
  ::kill(neighbour, SIGKILL);
  const engine::CpuAccount a = account_cpu(before, after);
  ASSERT_TRUE(a.valid) << a.error;
  EXPECT_GT(a.ours_core_s, 0.2);
  EXPECT_GT(a.other_core_s, 0.2);
  // (No bound by the capacity: per-process times and the CPUs' ticks
  // disagree by some percent, so ours + other may exceed it.)
}

// The report warns when other processes took a large share of the CPUs,
// naming the experiments; a quiet machine gets no warning.
TEST(CpuAccounting, TheReportWarnsAboutABusyMachine) {
  TempDir d;
  for (const auto& [id, share] : {std::pair{"scaling-s1", 0.05}, std::pair{"scaling-s2", 0.48}}) {
    ExperimentSpec s;
    s.id = id;
    const std::string dir = write_experiment(d.path(), s);
    nlohmann::json e;
    std::ifstream(dir + "/experiment.json") >> e;
    e["cpu_accounting"] = {{"capacity_core_s", 20}, {"other_share", share}};
    std::ofstream(dir + "/experiment.json") << e.dump(2);
  }
  const ReportMeta busy = report_meta(load_experiment_data(d.path()));
  ASSERT_EQ(busy.warnings.size(), 1u);
  EXPECT_NE(
      busy.warnings[0].find("up to 48% of its CPUs during 1 of 2 experiments (scaling-s2 48%)"),
      std::string::npos)
      << busy.warnings[0];
  NodeResult root;
  root.title = "Performance Problem";
  EXPECT_NE(report_summary(root, busy).find("WARNING: Other processes"), std::string::npos);
  EXPECT_EQ(report_json(root, busy)["warnings"].size(), 1u);

  TempDir quiet;
  ExperimentSpec s;
  s.id = "load";
  write_experiment(quiet.path(), s);  // no accounting (older data): no warning either
  EXPECT_TRUE(report_meta(load_experiment_data(quiet.path())).warnings.empty());
}

}  // namespace
}  // namespace sonde::diagnose::test
