#include "monitor/samplers/network_sampler.hpp"

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

constexpr const char* kHeader =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n";

// rx bytes, rx packets, 6 more rx columns, tx bytes, tx packets, 6 more tx columns.
std::string iface(const std::string& name, uint64_t rxb, uint64_t rxp, uint64_t txb, uint64_t txp) {
  return "  " + name + ": " + std::to_string(rxb) + " " + std::to_string(rxp) + " 1 2 3 4 5 6 " +
         std::to_string(txb) + " " + std::to_string(txp) + " 7 8 9 10 11 12\n";
}

class NetworkSamplerTest : public ::testing::Test {
 protected:
  NetworkSampler make() { return NetworkSampler("host-n", proc_.root()); }
  ProcFixture proc_;
  std::vector<format::Record> out_;
};

TEST_F(NetworkSamplerTest, ExactRatesOverTheInterval) {
  proc_.write("net/dev", std::string(kHeader) + iface("lo", 1000, 10, 1000, 10) +
                             iface("eth0", 5000000, 4000, 2000000, 1500));
  NetworkSampler sampler = make();
  EXPECT_EQ(sampler.name(), "network");
  sampler.sample(kT0, out_);
  EXPECT_TRUE(out_.empty());
  // Half a second later.
  proc_.write("net/dev", std::string(kHeader) + iface("lo", 1500, 15, 1500, 15) +
                             iface("eth0", 6000000, 4800, 2250000, 1600));
  sampler.sample(kT0 + kSecond / 2, out_);
  ASSERT_EQ(sampler.last_error(), "");
  ASSERT_EQ(out_.size(), 2u);

  const format::Record& lo = out_[0];
  EXPECT_EQ(lo.schema->class_name, system_class::kNetworkInterface);
  EXPECT_TRUE(format::values_match_schema(lo));
  EXPECT_EQ(str(lo, "interfaceName"), "lo");
  EXPECT_DOUBLE_EQ(f64(lo, "rxBytesPerSecond"), 1000.0);
  EXPECT_DOUBLE_EQ(f64(lo, "rxPacketsPerSecond"), 10.0);

  const format::Record& eth = out_[1];
  EXPECT_EQ(i64(eth, "timestamp"), kT0 + kSecond / 2);
  EXPECT_EQ(str(eth, "hostname"), "host-n");
  EXPECT_EQ(str(eth, "interfaceName"), "eth0");
  EXPECT_DOUBLE_EQ(f64(eth, "rxBytesPerSecond"), 2000000.0);
  EXPECT_DOUBLE_EQ(f64(eth, "txBytesPerSecond"), 500000.0);
  EXPECT_DOUBLE_EQ(f64(eth, "rxPacketsPerSecond"), 1600.0);
  EXPECT_DOUBLE_EQ(f64(eth, "txPacketsPerSecond"), 200.0);
  EXPECT_EQ(i64(eth, "rxBytesTotal"), 6000000);
  EXPECT_EQ(i64(eth, "txBytesTotal"), 2250000);
}

TEST_F(NetworkSamplerTest, NoSpaceAfterColonAsOnOldKernels) {
  proc_.write("net/dev", std::string(kHeader) + "eth0:100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n");
  NetworkSampler sampler = make();
  sampler.sample(kT0, out_);
  proc_.write("net/dev", std::string(kHeader) + "eth0:300 3 0 0 0 0 0 0 600 6 0 0 0 0 0 0\n");
  sampler.sample(kT0 + kSecond, out_);
  ASSERT_EQ(out_.size(), 1u) << sampler.last_error();
  EXPECT_EQ(str(out_[0], "interfaceName"), "eth0");
  EXPECT_DOUBLE_EQ(f64(out_[0], "rxBytesPerSecond"), 200.0);
  EXPECT_DOUBLE_EQ(f64(out_[0], "txBytesPerSecond"), 400.0);
}

TEST_F(NetworkSamplerTest, ResetCountersAndNewInterfacesArePrimedFirst) {
  proc_.write("net/dev", std::string(kHeader) + iface("eth0", 5000, 50, 5000, 50));
  NetworkSampler sampler = make();
  sampler.sample(kT0, out_);
  // eth0 was re-created (counters restart); veth1 appeared.
  proc_.write("net/dev",
              std::string(kHeader) + iface("eth0", 100, 1, 100, 1) + iface("veth1", 10, 1, 10, 1));
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(sampler.last_error(), "");
  proc_.write("net/dev",
              std::string(kHeader) + iface("eth0", 300, 3, 100, 1) + iface("veth1", 20, 2, 10, 1));
  sampler.sample(kT0 + 2 * kSecond, out_);
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_DOUBLE_EQ(f64(out_[0], "rxBytesPerSecond"), 200.0);
  EXPECT_DOUBLE_EQ(f64(out_[1], "rxBytesPerSecond"), 10.0);
}

TEST_F(NetworkSamplerTest, MalformedFilesGiveErrorNotRecords) {
  const std::string good = std::string(kHeader) + iface("eth0", 5000, 50, 5000, 50);
  const std::string bad[] = {
      "",
      "garbage\n\x01\x02\xff\n",
      iface("eth0", 6000, 60, 6000, 60),                 // no header
      std::string(kHeader) + "  eth0: 6000 60 1 2 3\n",  // truncated line
      std::string(kHeader) + "  eth0: 6000 60 1 2 3 4 5 6 x 60 7 8 9 10 11 12\n",
      std::string(kHeader) + iface("eth0", 6000, 60, 6000, 60) + "no colon here\n",
  };
  for (const std::string& content : bad) {
    proc_.write("net/dev", good);
    NetworkSampler sampler = make();
    sampler.sample(kT0, out_);
    proc_.write("net/dev", content);
    sampler.sample(kT0 + kSecond, out_);
    EXPECT_TRUE(out_.empty()) << content;
    EXPECT_FALSE(sampler.last_error().empty()) << content;
    EXPECT_EQ(sampler.last_error().find('\n'), std::string::npos);
  }
}

TEST_F(NetworkSamplerTest, MissingFileGivesError) {
  NetworkSampler sampler = make();
  sampler.sample(kT0, out_);
  sampler.sample(kT0 + kSecond, out_);
  EXPECT_TRUE(out_.empty());
  EXPECT_NE(sampler.last_error().find("net/dev"), std::string::npos) << sampler.last_error();
}

}  // namespace
}  // namespace sonde::monitor::samplers
