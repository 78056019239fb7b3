#include "monitor/samplers/process_sampler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "monitor/samplers/system_records.hpp"
#include "proc_fixture.hpp"

namespace sonde::monitor::samplers {
namespace {

using testing::f64;
using testing::i64;
using testing::kSecond;
using testing::kT0;
using testing::ProcFixture;
using testing::str;

// Fields 1..24 of /proc/<pid>/stat, then the rest; comm contains blanks and
// parentheses on purpose. utime (14), stime (15), num_threads (20) vary.
std::string stat_line(int utime, int stime, int threads) {
  return "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194304 100 0 0 0 " + std::to_string(utime) +
         " " + std::to_string(stime) + " 0 0 20 0 " + std::to_string(threads) +
         " 0 12345 256000000 2500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
}

constexpr const char* kStatus =
    "Name:\tmy (odd) prog\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t4242\n"
    "Pid:\t4242\n"
    "PPid:\t1\n"
    "VmPeak:\t  300000 kB\n"
    "VmSize:\t  250000 kB\n"
    "VmHWM:\t   12000 kB\n"
    "VmRSS:\t   10000 kB\n"
    "Threads:\t7\n";

class ProcessSamplerTest : public ::testing::Test {
 protected:
  ProcessSampler make() { return ProcessSampler("host-p", proc_.root(), 100); }
  std::vector<const format::Record*> of(std::string_view class_name) const {
    std::vector<const format::Record*> v;
    for (const format::Record& r : out_) {
      if (r.schema->class_name == class_name) v.push_back(&r);
    }
    return v;
  }
  ProcFixture proc_;
  std::vector<format::Record> out_;
};

TEST_F(ProcessSamplerTest, MemoryAtOnceCpuFromSecondCall) {
  proc_.write("self/stat", stat_line(300, 0, 7));
  proc_.write("self/status", kStatus);
  ProcessSampler sampler = make();
  EXPECT_EQ(sampler.name(), "process");
  sampler.sample(kT0, out_);
  ASSERT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 1u);
  const format::Record& mem = out_[0];
  EXPECT_EQ(mem.schema->class_name, system_class::kProcessMemory);
  EXPECT_TRUE(format::values_match_schema(mem));
  EXPECT_EQ(i64(mem, "timestamp"), kT0);
  EXPECT_EQ(str(mem, "hostname"), "host-p");
  EXPECT_EQ(i64(mem, "pid"), 4242);
  EXPECT_EQ(i64(mem, "rssBytes"), 10000 * 1024);
  EXPECT_EQ(i64(mem, "vmSizeBytes"), 250000 * 1024);
  EXPECT_EQ(i64(mem, "peakRssBytes"), 12000 * 1024);
}

TEST_F(ProcessSamplerTest, ExactCpuSecondsAndUtilisation) {
  proc_.write("self/stat", stat_line(250, 50, 7));
  proc_.write("self/status", kStatus);
  ProcessSampler sampler = make();
  sampler.sample(kT0, out_);
  // 2 s later: 300 more ticks at 100 ticks/s = 3 CPU seconds, i.e. 1.5 cores.
  proc_.write("self/stat", stat_line(500, 100, 9));
  sampler.sample(kT0 + 2 * kSecond, out_);
  ASSERT_EQ(sampler.last_error(), "");
  const auto cpu = of(system_class::kProcessCpu);
  ASSERT_EQ(cpu.size(), 1u);
  const format::Record& r = *cpu[0];
  EXPECT_TRUE(format::values_match_schema(r));
  EXPECT_EQ(i64(r, "timestamp"), kT0 + 2 * kSecond);
  EXPECT_EQ(str(r, "hostname"), "host-p");
  EXPECT_EQ(i64(r, "pid"), 4242);
  EXPECT_DOUBLE_EQ(f64(r, "userSeconds"), 5.0);
  EXPECT_DOUBLE_EQ(f64(r, "systemSeconds"), 1.0);
  EXPECT_DOUBLE_EQ(f64(r, "utilization"), 1.5);
  EXPECT_EQ(i64(r, "threads"), 9);
  EXPECT_EQ(of(system_class::kProcessMemory).size(), 2u);
}

TEST_F(ProcessSamplerTest, ClockGoingBackwardsGivesNoCpuRecord) {
  proc_.write("self/stat", stat_line(250, 50, 7));
  proc_.write("self/status", kStatus);
  ProcessSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("self/stat", stat_line(500, 100, 7));
  sampler.sample(kT0 - kSecond, out_);
  EXPECT_TRUE(of(system_class::kProcessCpu).empty());
  proc_.write("self/stat", stat_line(600, 100, 7));
  sampler.sample(kT0, out_);  // measured from the re-primed reading
  const auto cpu = of(system_class::kProcessCpu);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_DOUBLE_EQ(f64(*cpu[0], "utilization"), 1.0);
}

TEST_F(ProcessSamplerTest, FilesFailIndependently) {
  proc_.write("self/stat", stat_line(250, 50, 7));
  ProcessSampler sampler = make();
  sampler.sample(kT0, out_);  // no status file
  EXPECT_TRUE(out_.empty());
  EXPECT_NE(sampler.last_error().find("self/status"), std::string::npos) << sampler.last_error();
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_EQ(of(system_class::kProcessCpu).size(), 1u);
  EXPECT_TRUE(of(system_class::kProcessMemory).empty());

  out_.clear();
  proc_.remove("self/stat");
  proc_.write("self/status", kStatus);
  sampler.sample(kT0 + 2 * kSecond, out_);
  EXPECT_NE(sampler.last_error().find("self/stat"), std::string::npos) << sampler.last_error();
  EXPECT_TRUE(of(system_class::kProcessCpu).empty());
  EXPECT_EQ(of(system_class::kProcessMemory).size(), 1u);
}

TEST_F(ProcessSamplerTest, MalformedStatGivesErrorNotRecord) {
  const std::string full = stat_line(250, 50, 7);
  const std::string bad[] = {
      "",
      "garbage without parentheses\n",
      full.substr(0, 60),                                        // truncated before utime
      "4242 (prog) S 1 2 3 4 5 6 7 8 9 10 x y 0 0 20 0 7 0\n",   // utime not a number
      "abc (prog) S 1 2 3 4 5 6 7 8 9 10 11 12 0 0 20 0 7 0\n",  // pid not a number
  };
  for (const std::string& content : bad) {
    proc_.write("self/stat", full);
    proc_.write("self/status", kStatus);
    ProcessSampler sampler = make();
    sampler.sample(kT0, out_);
    out_.clear();
    proc_.write("self/stat", content);
    sampler.sample(kT0 + kSecond, out_);
    EXPECT_TRUE(of(system_class::kProcessCpu).empty()) << content;
    EXPECT_FALSE(sampler.last_error().empty()) << content;
  }
}

TEST_F(ProcessSamplerTest, MalformedStatusGivesErrorNotRecord) {
  const char* bad[] = {
      "",
      "Pid:\t4242\nVmSize:\t 250000 kB\nVmHWM:\t 12000 kB\n",  // no VmRSS
      "Pid:\t4242\nVmSize:\t 250000 kB\nVmHWM:\t 12000 kB\nVmRSS:\t lots kB\n",
      "Pid:\t4242\nVmSize:\t 250000 kB\nVmHWM:\t 12000 kB\nVmRSS:\t 10000\n",  // no unit
      "Pid:\tx\nVmSize:\t 250000 kB\nVmHWM:\t 12000 kB\nVmRSS:\t 10000 kB\n",
  };
  for (const char* content : bad) {
    out_.clear();
    proc_.write("self/stat", stat_line(250, 50, 7));
    proc_.write("self/status", content);
    ProcessSampler sampler = make();
    sampler.sample(kT0, out_);
    EXPECT_TRUE(out_.empty()) << content;
    EXPECT_FALSE(sampler.last_error().empty()) << content;
    EXPECT_EQ(sampler.last_error().find('\n'), std::string::npos);
  }
}

// The real /proc/self: this test process itself.
TEST(ProcessSamplerRealProc, ReportsThisProcess) {
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  ProcessSampler sampler("real");
  std::vector<format::Record> out;
  sampler.sample(now_ns(), out);
  // Burn some CPU so that the utilisation has something to measure.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(60);
  volatile uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
  sampler.sample(now_ns(), out);
  ASSERT_EQ(sampler.last_error(), "");
  int cpu = 0, mem = 0;
  for (const format::Record& r : out) {
    EXPECT_TRUE(format::values_match_schema(r));
    EXPECT_EQ(i64(r, "pid"), ::getpid());
    if (r.schema->class_name == system_class::kProcessCpu) {
      ++cpu;
      // One thread was busy; clock-tick rounding (10 ms) can only add a little.
      EXPECT_GE(f64(r, "utilization"), 0.0);
      EXPECT_LE(f64(r, "utilization"), 3.0);
      EXPECT_GT(f64(r, "userSeconds") + f64(r, "systemSeconds"), 0.0);
      EXPECT_GE(i64(r, "threads"), 1);
    } else {
      ++mem;
      EXPECT_GT(i64(r, "rssBytes"), 0);
      EXPECT_GE(i64(r, "peakRssBytes"), i64(r, "rssBytes"));
      EXPECT_GE(i64(r, "vmSizeBytes"), i64(r, "rssBytes"));
    }
  }
  EXPECT_EQ(cpu, 1);
  EXPECT_EQ(mem, 2);
}

}  // namespace
}  // namespace sonde::monitor::samplers
