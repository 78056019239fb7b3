#include "monitor/samplers/memory_sampler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/schema.hpp"
#include "proc_fixture.hpp"

namespace sonde::monitor::samplers {
namespace {

using testing::i64;
using testing::kSecond;
using testing::kT0;
using testing::ProcFixture;
using testing::str;

using T = format::FieldType;
const format::RecordSchema kKiekerMemFields{std::string(format::kieker_class::kMemSwapUsage),
                                            {{"timestamp", T::kInt64},
                                             {"hostname", T::kString},
                                             {"memTotal", T::kInt64},
                                             {"memUsed", T::kInt64},
                                             {"memFree", T::kInt64},
                                             {"swapTotal", T::kInt64},
                                             {"swapUsed", T::kInt64},
                                             {"swapFree", T::kInt64}}};

const format::RecordSchema* mem_schema() {
  const format::RecordSchema* s = format::find_builtin_schema(format::kieker_class::kMemSwapUsage);
  return s != nullptr ? s : &kKiekerMemFields;
}

constexpr int64_t kKiB = 1024;

constexpr const char* kMeminfo =
    "MemTotal:       16384000 kB\n"
    "MemFree:         1000000 kB\n"
    "MemAvailable:    8192000 kB\n"
    "Buffers:          200000 kB\n"
    "Cached:          3000000 kB\n"
    "SwapCached:            0 kB\n"
    "SReclaimable:     100000 kB\n"
    "SwapTotal:       2097152 kB\n"
    "SwapFree:        1048576 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n";

class MemorySamplerTest : public ::testing::Test {
 protected:
  MemorySampler make() { return MemorySampler("host-m", proc_.root(), mem_schema()); }
  ProcFixture proc_;
  std::vector<format::Record> out_;
};

TEST_F(MemorySamplerTest, UsesKiekerMemSwapUsageSchema) {
  const format::RecordSchema* s = format::find_builtin_schema(format::kieker_class::kMemSwapUsage);
  if (s == nullptr) GTEST_SKIP() << "MemSwapUsageRecord schema not registered yet";
  proc_.write("meminfo", kMeminfo);
  MemorySampler sampler("h", proc_.root());
  sampler.sample(kT0, out_);
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].schema, s);
}

TEST_F(MemorySamplerTest, FirstCallGivesExactBytes) {
  proc_.write("meminfo", kMeminfo);
  MemorySampler sampler = make();
  sampler.sample(kT0, out_);
  ASSERT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 1u);
  const format::Record& r = out_[0];
  EXPECT_TRUE(format::values_match_schema(r));
  EXPECT_EQ(sampler.name(), "memory");
  EXPECT_EQ(i64(r, "timestamp"), kT0);
  EXPECT_EQ(str(r, "hostname"), "host-m");
  EXPECT_EQ(i64(r, "memTotal"), 16384000 * kKiB);
  EXPECT_EQ(i64(r, "memFree"), 8192000 * kKiB);               // MemAvailable
  EXPECT_EQ(i64(r, "memUsed"), (16384000 - 8192000) * kKiB);  // total - available
  EXPECT_EQ(i64(r, "swapTotal"), 2097152 * kKiB);
  EXPECT_EQ(i64(r, "swapFree"), 1048576 * kKiB);
  EXPECT_EQ(i64(r, "swapUsed"), (2097152 - 1048576) * kKiB);
}

TEST_F(MemorySamplerTest, WithoutMemAvailableEstimatesFromCaches) {
  std::string old_kernel = kMeminfo;
  old_kernel.erase(old_kernel.find("MemAvailable"),
                   old_kernel.find("Buffers") - old_kernel.find("MemAvailable"));
  proc_.write("meminfo", old_kernel);
  MemorySampler sampler = make();
  sampler.sample(kT0, out_);
  ASSERT_EQ(out_.size(), 1u) << sampler.last_error();
  const int64_t available = 1000000 + 200000 + 3000000 + 100000;  // free+buffers+cached+slab
  EXPECT_EQ(i64(out_[0], "memFree"), available * kKiB);
  EXPECT_EQ(i64(out_[0], "memUsed"), (16384000 - available) * kKiB);
}

TEST_F(MemorySamplerTest, NoSwapIsFine) {
  proc_.write("meminfo",
              "MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 400 kB\n"
              "SwapTotal: 0 kB\nSwapFree: 0 kB\n");
  MemorySampler sampler = make();
  sampler.sample(kT0, out_);
  ASSERT_EQ(out_.size(), 1u) << sampler.last_error();
  EXPECT_EQ(i64(out_[0], "memUsed"), 600 * kKiB);
  EXPECT_EQ(i64(out_[0], "swapUsed"), 0);
}

TEST_F(MemorySamplerTest, MalformedFilesGiveErrorNotRecords) {
  const char* bad[] = {
      "",
      "garbage\n\x01\x02\xff\n",
      "MemTotal: 16384000 kB\nMemFree: 1000000 kB\n",  // truncated: no swap lines
      "MemTotal: lots kB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
      "MemTotal: 100 MB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",  // unknown unit
      "MemTotal: 99999999999999999999 kB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
  };
  for (const char* content : bad) {
    proc_.write("meminfo", content);
    MemorySampler sampler = make();
    sampler.sample(kT0, out_);
    EXPECT_TRUE(out_.empty()) << content;
    EXPECT_FALSE(sampler.last_error().empty()) << content;
    EXPECT_EQ(sampler.last_error().find('\n'), std::string::npos);
  }
}

TEST_F(MemorySamplerTest, MissingFileGivesErrorThenRecovers) {
  MemorySampler sampler = make();
  sampler.sample(kT0, out_);
  EXPECT_TRUE(out_.empty());
  EXPECT_NE(sampler.last_error().find("meminfo"), std::string::npos) << sampler.last_error();
  proc_.write("meminfo", kMeminfo);
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_EQ(sampler.last_error(), "");
  EXPECT_EQ(out_.size(), 1u);
}

}  // namespace
}  // namespace sonde::monitor::samplers
