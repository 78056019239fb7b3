#include "monitor/samplers/disk_sampler.hpp"

#include <gtest/gtest.h>

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

// Columns after the name: reads, reads merged, sectors read, ms reading,
// writes, writes merged, sectors written, ms writing, in flight, ms doing
// I/O, weighted ms; then (newer kernels) discard and flush columns.
constexpr const char* kStats1 =
    "   8       0 sda 1000 10 80000 500 2000 20 160000 1000 0 700 1500 0 0 0 0 0 0\n"
    "   8       1 sda1 900 10 70000 400 1900 20 150000 900 0 600 1300 0 0 0 0 0 0\n"
    " 259       0 nvme0n1 100 0 8000 50 200 0 16000 100 0 70 150\n"
    " 259       1 nvme0n1p1 100 0 8000 50 200 0 16000 100 0 70 150\n"
    "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 253       0 dm-0 50 0 400 10 60 0 480 12 0 20 22 0 0 0 0\n";
// Two seconds later: sda +200 reads / +4000 sectors, +100 writes / +2000
// sectors, +500 ms busy; sda1 changes too but is a partition; nvme0n1 idle;
// dm-0 +10 reads / +80 sectors, +4000 ms busy (more than the interval).
constexpr const char* kStats2 =
    "   8       0 sda 1200 10 84000 600 2100 20 162000 1100 1 1200 2000 0 0 0 0 0 0\n"
    "   8       1 sda1 1100 10 74000 500 2000 20 152000 1000 1 1100 1800 0 0 0 0 0 0\n"
    " 259       0 nvme0n1 100 0 8000 50 200 0 16000 100 0 70 150\n"
    " 259       1 nvme0n1p1 100 0 8000 50 200 0 16000 100 0 70 150\n"
    "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 253       0 dm-0 60 0 480 10 60 0 480 12 0 4020 22 0 0 0 0\n";

class DiskSamplerTest : public ::testing::Test {
 protected:
  DiskSampler make() { return DiskSampler("host-d", proc_.root()); }
  ProcFixture proc_;
  std::vector<format::Record> out_;
};

TEST_F(DiskSamplerTest, ExactRatesForWholeDevicesOnly) {
  proc_.write("diskstats", kStats1);
  DiskSampler sampler = make();
  EXPECT_EQ(sampler.name(), "disk");
  sampler.sample(kT0, out_);
  EXPECT_TRUE(out_.empty());
  proc_.write("diskstats", kStats2);
  sampler.sample(kT0 + 2 * kSecond, out_);
  ASSERT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 3u);  // sda, nvme0n1, dm-0: no partitions, no unused loop0

  const format::Record& sda = out_[0];
  EXPECT_EQ(sda.schema->class_name, system_class::kDiskIo);
  EXPECT_TRUE(format::values_match_schema(sda));
  EXPECT_EQ(i64(sda, "timestamp"), kT0 + 2 * kSecond);
  EXPECT_EQ(str(sda, "hostname"), "host-d");
  EXPECT_EQ(str(sda, "deviceName"), "sda");
  EXPECT_DOUBLE_EQ(f64(sda, "readBytesPerSecond"), 4000.0 * 512 / 2);
  EXPECT_DOUBLE_EQ(f64(sda, "writeBytesPerSecond"), 2000.0 * 512 / 2);
  EXPECT_DOUBLE_EQ(f64(sda, "readsPerSecond"), 100.0);
  EXPECT_DOUBLE_EQ(f64(sda, "writesPerSecond"), 50.0);
  EXPECT_DOUBLE_EQ(f64(sda, "ioTimeFraction"), 0.25);

  const format::Record& nvme = out_[1];
  EXPECT_EQ(str(nvme, "deviceName"), "nvme0n1");
  EXPECT_DOUBLE_EQ(f64(nvme, "readBytesPerSecond"), 0.0);
  EXPECT_DOUBLE_EQ(f64(nvme, "ioTimeFraction"), 0.0);

  const format::Record& dm = out_[2];
  EXPECT_EQ(str(dm, "deviceName"), "dm-0");
  EXPECT_DOUBLE_EQ(f64(dm, "readBytesPerSecond"), 80.0 * 512 / 2);
  EXPECT_DOUBLE_EQ(f64(dm, "ioTimeFraction"), 1.0);  // clamped
}

TEST(DiskPartitionRule, FollowsKernelNaming) {
  const std::vector<std::string_view> devices = {"sda",   "sdp",  "nvme0n1", "mmcblk0", "md12",
                                                 "loop0", "dm-0", "sr0",     "xvda",    "vdb"};
  EXPECT_TRUE(DiskSampler::is_partition("sda1", devices));
  EXPECT_TRUE(DiskSampler::is_partition("sda15", devices));
  EXPECT_TRUE(DiskSampler::is_partition("sdp1", devices));  // disk name ends in 'p'
  EXPECT_TRUE(DiskSampler::is_partition("nvme0n1p1", devices));
  EXPECT_TRUE(DiskSampler::is_partition("mmcblk0p2", devices));
  EXPECT_TRUE(DiskSampler::is_partition("loop0p1", devices));
  EXPECT_TRUE(DiskSampler::is_partition("xvda1", devices));
  EXPECT_TRUE(DiskSampler::is_partition("vdb3", devices));
  EXPECT_FALSE(DiskSampler::is_partition("sda", devices));
  EXPECT_FALSE(DiskSampler::is_partition("nvme0n1", devices));  // no "nvme0n" disk
  EXPECT_FALSE(DiskSampler::is_partition("mmcblk0", devices));
  EXPECT_FALSE(DiskSampler::is_partition("md127", devices));  // "md12" + "7" is not the rule
  EXPECT_FALSE(DiskSampler::is_partition("dm-0", devices));
  EXPECT_FALSE(DiskSampler::is_partition("sr0", devices));
  EXPECT_FALSE(DiskSampler::is_partition("sdb1", devices));  // parent not listed
}

TEST_F(DiskSamplerTest, ResetDeviceIsSkippedOnce) {
  proc_.write("diskstats", kStats2);
  DiskSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("diskstats", kStats1);  // sda's and dm-0's counters went down
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(str(out_[0], "deviceName"), "nvme0n1");  // unchanged, so still reported
  out_.clear();
  proc_.write("diskstats", kStats2);
  sampler.sample(kT0 + 3 * kSecond, out_);
  ASSERT_EQ(out_.size(), 3u);
  EXPECT_DOUBLE_EQ(f64(out_[0], "readsPerSecond"), 100.0);
}

TEST_F(DiskSamplerTest, MalformedFilesGiveErrorNotRecords) {
  const char* bad[] = {
      "",
      "garbage\n\x01\x02\xff\n",
      "   8       0 sda 1200 10 84000 600 2100\n",  // truncated line
      "   8       0 sda 1200 10 84000 600 2100 20 162000 1100 1 busy 2000\n",
      "   x       0 sda 1200 10 84000 600 2100 20 162000 1100 1 1200 2000\n",
  };
  for (const char* content : bad) {
    proc_.write("diskstats", kStats1);
    DiskSampler sampler = make();
    sampler.sample(kT0, out_);
    proc_.write("diskstats", content);
    sampler.sample(kT0 + kSecond, out_);
    EXPECT_TRUE(out_.empty()) << content;
    EXPECT_FALSE(sampler.last_error().empty()) << content;
    EXPECT_EQ(sampler.last_error().find('\n'), std::string::npos);
  }
}

TEST_F(DiskSamplerTest, MissingFileGivesError) {
  DiskSampler sampler = make();
  sampler.sample(kT0, out_);
  EXPECT_NE(sampler.last_error().find("diskstats"), std::string::npos) << sampler.last_error();
  EXPECT_TRUE(out_.empty());
}

}  // namespace
}  // namespace sonde::monitor::samplers
