#include "monitor/samplers/cpu_sampler.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "format/schema.hpp"
#include "proc_fixture.hpp"

namespace sonde::monitor::samplers {
namespace {

using testing::f64;
using testing::i64;
using testing::kSecond;
using testing::kT0;
using testing::ProcFixture;
using testing::str;

// Columns: user nice system idle iowait irq softirq steal guest guest_nice.
constexpr const char* kStat1 =
    "cpu  1000 100 500 8000 100 50 50 0 0 0\n"
    "cpu0 500 50 250 4000 50 25 25 0 0 0\n"
    "cpu1 500 50 250 4000 50 25 25 0 0 0\n"
    "intr 12345 1 2 3\n"
    "ctxt 999\n"
    "btime 1700000000\n";
// Deltas: all  = user 60, nice 0, system 20, idle 90, iowait 20, irq 5+5, steal 0 (200)
//         cpu0 = user 40, nice 10, system 10, idle 30, iowait 0, irq 4+1, steal 5 (100)
//         cpu1 = user 20, nice 0, system 10, idle 60, iowait 10, irq 0, steal 0  (100)
constexpr const char* kStat2 =
    "cpu  1060 100 520 8090 120 55 55 0 0 0\n"
    "cpu0 540 60 260 4030 50 29 26 5 0 0\n"
    "cpu1 520 50 260 4060 60 25 25 0 0 0\n"
    "intr 23456 1 2 3\n"
    "ctxt 1999\n";

// Kieker's field list, for when the built-in schema is not (yet) registered.
const format::RecordSchema kKiekerCpuFields{std::string(format::kieker_class::kCpuUtilization),
                                            {{"timestamp", format::FieldType::kInt64},
                                             {"hostname", format::FieldType::kString},
                                             {"cpuID", format::FieldType::kString},
                                             {"user", format::FieldType::kDouble},
                                             {"system", format::FieldType::kDouble},
                                             {"wait", format::FieldType::kDouble},
                                             {"nice", format::FieldType::kDouble},
                                             {"irq", format::FieldType::kDouble},
                                             {"totalUtilization", format::FieldType::kDouble},
                                             {"idle", format::FieldType::kDouble}}};

const format::RecordSchema* cpu_schema() {
  const format::RecordSchema* s =
      format::find_builtin_schema(format::kieker_class::kCpuUtilization);
  return s != nullptr ? s : &kKiekerCpuFields;
}

class CpuSamplerTest : public ::testing::Test {
 protected:
  CpuSampler make() { return CpuSampler("host-a", proc_.root(), cpu_schema()); }
  ProcFixture proc_;
  std::vector<format::Record> out_;
};

TEST_F(CpuSamplerTest, UsesKiekerCpuUtilizationSchema) {
  const format::RecordSchema* s =
      format::find_builtin_schema(format::kieker_class::kCpuUtilization);
  if (s == nullptr) GTEST_SKIP() << "CPUUtilizationRecord schema not registered yet";
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("stat", kStat2);
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_FALSE(out_.empty());
  EXPECT_EQ(out_[0].schema, s);
}

TEST_F(CpuSamplerTest, FirstCallOnlyPrimes) {
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(sampler.last_error(), "");
  EXPECT_EQ(sampler.name(), "cpu");
}

TEST_F(CpuSamplerTest, ExactFractionsFromJiffyDeltas) {
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("stat", kStat2);
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 3u);

  const format::Record& all = out_[0];
  EXPECT_TRUE(format::values_match_schema(all));
  EXPECT_EQ(i64(all, "timestamp"), kT0 + kSecond);
  EXPECT_EQ(str(all, "hostname"), "host-a");
  EXPECT_EQ(str(all, "cpuID"), "all");
  EXPECT_DOUBLE_EQ(f64(all, "user"), 60.0 / 200);
  EXPECT_DOUBLE_EQ(f64(all, "nice"), 0.0);
  EXPECT_DOUBLE_EQ(f64(all, "system"), 20.0 / 200);
  EXPECT_DOUBLE_EQ(f64(all, "wait"), 20.0 / 200);
  EXPECT_DOUBLE_EQ(f64(all, "irq"), 10.0 / 200);
  EXPECT_DOUBLE_EQ(f64(all, "idle"), 90.0 / 200);
  // Busy = everything but idle and iowait.
  EXPECT_DOUBLE_EQ(f64(all, "totalUtilization"), 90.0 / 200);

  const format::Record& cpu0 = out_[1];
  EXPECT_EQ(str(cpu0, "cpuID"), "cpu0");
  EXPECT_DOUBLE_EQ(f64(cpu0, "user"), 0.40);
  EXPECT_DOUBLE_EQ(f64(cpu0, "nice"), 0.10);
  EXPECT_DOUBLE_EQ(f64(cpu0, "system"), 0.10);
  EXPECT_DOUBLE_EQ(f64(cpu0, "wait"), 0.0);
  EXPECT_DOUBLE_EQ(f64(cpu0, "irq"), 0.05);
  EXPECT_DOUBLE_EQ(f64(cpu0, "idle"), 0.30);
  EXPECT_DOUBLE_EQ(f64(cpu0, "totalUtilization"), 0.70);  // includes steal 0.05

  const format::Record& cpu1 = out_[2];
  EXPECT_EQ(str(cpu1, "cpuID"), "cpu1");
  EXPECT_DOUBLE_EQ(f64(cpu1, "user"), 0.20);
  EXPECT_DOUBLE_EQ(f64(cpu1, "wait"), 0.10);
  EXPECT_DOUBLE_EQ(f64(cpu1, "idle"), 0.60);
  EXPECT_DOUBLE_EQ(f64(cpu1, "totalUtilization"), 0.30);
}

TEST_F(CpuSamplerTest, StringsOutliveTheFileBuffer) {
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("stat", kStat2);
  sampler.sample(kT0 + kSecond, out_);
  // Reading a different file reuses the sampler's read buffer; the views in
  // the earlier records must not change.
  proc_.write("stat", "cpu  9 9 9 9\ncpu7 9 9 9 9\n");
  std::vector<format::Record> later;
  sampler.sample(kT0 + 2 * kSecond, later);
  ASSERT_EQ(out_.size(), 3u);
  EXPECT_EQ(str(out_[1], "cpuID"), "cpu0");
  EXPECT_EQ(str(out_[2], "cpuID"), "cpu1");
  EXPECT_EQ(str(out_[2], "hostname"), "host-a");
}

TEST_F(CpuSamplerTest, OldKernelFourColumnsAndNewCpusArePrimed) {
  proc_.write("stat", "cpu  100 0 100 800\ncpu0 100 0 100 800\n");
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("stat", "cpu  150 0 150 900\ncpu0 150 0 150 900\ncpu1 5 0 5 90\n");
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 2u);  // cpu1 is new: primed, not reported
  EXPECT_EQ(str(out_[1], "cpuID"), "cpu0");
  EXPECT_DOUBLE_EQ(f64(out_[1], "user"), 0.25);
  EXPECT_DOUBLE_EQ(f64(out_[1], "idle"), 0.50);
  EXPECT_DOUBLE_EQ(f64(out_[1], "totalUtilization"), 0.50);
}

TEST_F(CpuSamplerTest, CounterGoingBackwardsStaysInRange) {
  // Some kernels step iowait back; the delta must clamp at 0, not wrap.
  proc_.write("stat", "cpu  100 0 100 800 500 0 0 0\n");
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("stat", "cpu  150 0 150 900 400 0 0 0\n");
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_DOUBLE_EQ(f64(out_[0], "wait"), 0.0);
  EXPECT_DOUBLE_EQ(f64(out_[0], "user"), 0.25);
  EXPECT_DOUBLE_EQ(f64(out_[0], "idle"), 0.50);
}

TEST_F(CpuSamplerTest, NoTicksNoRecord) {
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  sampler.sample(kT0 + kSecond, out_);  // same counters: nothing to divide by
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(sampler.last_error(), "");
}

TEST_F(CpuSamplerTest, AReadingWithoutTicksKeepsTheBase) {
  // /proc/stat unchanged between two periods: the next record must cover both
  // periods, measured from the first reading, not be lost.
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_TRUE(out_.empty());
  proc_.write("stat", kStat2);
  sampler.sample(kT0 + 2 * kSecond, out_);
  ASSERT_EQ(out_.size(), 3u);
  EXPECT_EQ(i64(out_[0], "timestamp"), kT0 + 2 * kSecond);
  EXPECT_DOUBLE_EQ(f64(out_[0], "totalUtilization"), 90.0 / 200);
  // And the base moves on once a record was made.
  out_.clear();
  sampler.sample(kT0 + 3 * kSecond, out_);
  EXPECT_TRUE(out_.empty());
}

TEST_F(CpuSamplerTest, MissingFileGivesErrorNotRecords) {
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_TRUE(out_.empty());
  EXPECT_NE(sampler.last_error().find(proc_.root() + "/stat"), std::string::npos)
      << sampler.last_error();
  EXPECT_EQ(sampler.last_error().find('\n'), std::string::npos);
}

TEST_F(CpuSamplerTest, MalformedFilesGiveErrorNotRecords) {
  const char* bad[] = {
      "",                                                           // empty
      "hello world\nthis is not /proc/stat\n",                      // garbage
      "cpu  1060 100 520 8090 120 55 55 0 0 0\ncpu0 540 60\n",      // truncated line
      "cpu  1060 100 520 8090 120 55 55 0 0 0\ncpu0 5x 1 2 3 4\n",  // not a number
      "cpu  -5 100 520 8090\n",                                     // negative
      "\x01\x02\xff\xfe garbage \x7f\n",                            // binary
  };
  for (const char* content : bad) {
    proc_.write("stat", kStat1);
    CpuSampler sampler = make();
    sampler.sample(kT0, out_);
    proc_.write("stat", content);
    sampler.sample(kT0 + kSecond, out_);
    EXPECT_TRUE(out_.empty()) << content;
    EXPECT_FALSE(sampler.last_error().empty()) << content;
    EXPECT_EQ(sampler.last_error().find('\n'), std::string::npos);
  }
}

TEST_F(CpuSamplerTest, RecoversAfterABadSample) {
  proc_.write("stat", kStat1);
  CpuSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("stat", "cpu0 garbage\n");
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_FALSE(sampler.last_error().empty());
  proc_.write("stat", kStat2);
  sampler.sample(kT0 + 2 * kSecond, out_);
  EXPECT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 3u);  // deltas against the last good reading
  EXPECT_DOUBLE_EQ(f64(out_[0], "user"), 0.30);
}

TEST_F(CpuSamplerTest, CustomSchemaIsFilledByFieldName) {
  // A schema with other field order and only some fields: values go where
  // the names say, and missing fields are simply not set.
  const format::RecordSchema schema{"test.Cpu",
                                    {{"idle", format::FieldType::kDouble},
                                     {"cpuID", format::FieldType::kString},
                                     {"user", format::FieldType::kFloat}}};
  proc_.write("stat", kStat1);
  CpuSampler sampler("h", proc_.root(), &schema);
  sampler.sample(kT0, out_);
  proc_.write("stat", kStat2);
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_EQ(out_.size(), 3u);
  EXPECT_TRUE(format::values_match_schema(out_[0]));
  EXPECT_DOUBLE_EQ(out_[0].f64(0), 0.45);
  EXPECT_EQ(out_[0].str(1), "all");
  EXPECT_DOUBLE_EQ(out_[0].f64(2), 0.30);
}

}  // namespace
}  // namespace sonde::monitor::samplers
