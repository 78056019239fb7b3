#include "monitor/samplers/make_samplers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "format/schema.hpp"
#include "monitor/samplers/system_records.hpp"
#include "proc_fixture.hpp"

namespace sonde::monitor::samplers {
namespace {

using testing::f64;
using testing::i64;
using testing::str;

std::vector<std::string> names_of(const std::vector<std::unique_ptr<Sampler>>& samplers) {
  std::vector<std::string> v;
  for (const auto& s : samplers) v.emplace_back(s->name());
  return v;
}

TEST(MakeSamplers, CreatesNamedSamplersInOrder) {
  std::string error;
  auto s = make_samplers({"memory", "cpu"}, "h", &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(names_of(s), (std::vector<std::string>{"memory", "cpu"}));
}

TEST(MakeSamplers, AllMeansEveryOneOnce) {
  std::string error;
  auto s = make_samplers({"disk", "all", " cpu ", ""}, "h", &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(names_of(s), (std::vector<std::string>{"disk", "cpu", "memory", "process", "network"}));
}

TEST(MakeSamplers, EmptyListIsNoSamplers) {
  std::string error;
  EXPECT_TRUE(make_samplers({}, "h", &error).empty());
  EXPECT_EQ(error, "");
}

TEST(MakeSamplers, UnknownNameIsRejectedByName) {
  std::string error;
  auto s = make_samplers({"cpu", "gpu", "memory"}, "h", &error);
  EXPECT_TRUE(s.empty());
  EXPECT_NE(error.find("'gpu'"), std::string::npos) << error;
  EXPECT_NE(error.find("cpu, memory, process, network, disk, all"), std::string::npos) << error;
  EXPECT_TRUE(make_samplers({"CPU"}, "h", nullptr).empty());  // names are lower case
}

// The class names the samplers look up must be the ones format/ defines, with
// the documented fields (docs/samplers.md).
TEST(SystemSchemas, AreRegisteredWithDocumentedFields) {
  using T = format::FieldType;
  struct Expected {
    std::string_view class_name;
    std::vector<format::FieldSpec> fields;
  };
  const std::vector<Expected> expected = {
      {system_class::kProcessCpu,
       {{"timestamp", T::kInt64},
        {"hostname", T::kString},
        {"pid", T::kInt32},
        {"userSeconds", T::kDouble},
        {"systemSeconds", T::kDouble},
        {"utilization", T::kDouble},
        {"threads", T::kInt32}}},
      {system_class::kProcessMemory,
       {{"timestamp", T::kInt64},
        {"hostname", T::kString},
        {"pid", T::kInt32},
        {"rssBytes", T::kInt64},
        {"vmSizeBytes", T::kInt64},
        {"peakRssBytes", T::kInt64}}},
      {system_class::kNetworkInterface,
       {{"timestamp", T::kInt64},
        {"hostname", T::kString},
        {"interfaceName", T::kString},
        {"rxBytesPerSecond", T::kDouble},
        {"txBytesPerSecond", T::kDouble},
        {"rxPacketsPerSecond", T::kDouble},
        {"txPacketsPerSecond", T::kDouble},
        {"rxBytesTotal", T::kInt64},
        {"txBytesTotal", T::kInt64}}},
      {system_class::kDiskIo,
       {{"timestamp", T::kInt64},
        {"hostname", T::kString},
        {"deviceName", T::kString},
        {"readBytesPerSecond", T::kDouble},
        {"writeBytesPerSecond", T::kDouble},
        {"readsPerSecond", T::kDouble},
        {"writesPerSecond", T::kDouble},
        {"ioTimeFraction", T::kDouble}}},
  };
  for (const Expected& e : expected) {
    const format::RecordSchema* s = format::find_builtin_schema(e.class_name);
    ASSERT_NE(s, nullptr) << e.class_name;
    ASSERT_EQ(s->fields.size(), e.fields.size()) << e.class_name;
    for (size_t i = 0; i < e.fields.size(); ++i) {
      EXPECT_EQ(s->fields[i].name, e.fields[i].name) << e.class_name;
      EXPECT_EQ(s->fields[i].type, e.fields[i].type) << e.class_name << "." << e.fields[i].name;
    }
  }
}

// Every sampler against this machine's real /proc: records are well-formed
// and their values plausible.
TEST(RealProc, AllSamplersGiveSaneRecords) {
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  std::string error;
  auto samplers = make_samplers({"all"}, "real-host", &error);
  ASSERT_EQ(samplers.size(), 5u) << error;
  std::vector<format::Record> out;
  for (auto& s : samplers) s->sample(now_ns(), out);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  out.clear();
  const int64_t t = now_ns();
  for (auto& s : samplers) {
    s->sample(t, out);
    // Containers may hide /proc/diskstats; everything else must be there.
    if (s->name() != "disk") {
      EXPECT_EQ(s->last_error(), "") << s->name();
    }
  }

  int cpu_all = 0, memory = 0, process_memory = 0;
  for (const format::Record& r : out) {
    ASSERT_NE(r.schema, nullptr);
    EXPECT_TRUE(format::values_match_schema(r)) << r.schema->class_name;
    EXPECT_EQ(i64(r, "timestamp"), t);
    EXPECT_EQ(str(r, "hostname"), "real-host");
    const std::string_view c = r.schema->class_name;
    if (c == format::kieker_class::kCpuUtilization) {
      double sum = 0;
      for (const char* f : {"user", "system", "wait", "nice", "irq", "idle", "totalUtilization"}) {
        EXPECT_GE(f64(r, f), 0.0) << f;
        EXPECT_LE(f64(r, f), 1.0) << f;
        if (std::string_view(f) != "totalUtilization") sum += f64(r, f);
      }
      EXPECT_LE(sum, 1.0 + 1e-9);  // the rest is steal
      if (str(r, "cpuID") == "all") ++cpu_all;
    } else if (c == format::kieker_class::kMemSwapUsage) {
      ++memory;
      EXPECT_GT(i64(r, "memTotal"), 0);
      EXPECT_GT(i64(r, "memUsed"), 0);
      EXPECT_EQ(i64(r, "memUsed") + i64(r, "memFree"), i64(r, "memTotal"));
      EXPECT_EQ(i64(r, "swapUsed") + i64(r, "swapFree"), i64(r, "swapTotal"));
    } else if (c == system_class::kProcessMemory) {
      ++process_memory;
      EXPECT_GT(i64(r, "rssBytes"), 0);
    } else if (c == system_class::kNetworkInterface) {
      EXPECT_FALSE(str(r, "interfaceName").empty());
      EXPECT_GE(f64(r, "rxBytesPerSecond"), 0.0);
      EXPECT_GE(f64(r, "txBytesPerSecond"), 0.0);
    } else if (c == system_class::kDiskIo) {
      EXPECT_FALSE(str(r, "deviceName").empty());
      EXPECT_GE(f64(r, "ioTimeFraction"), 0.0);
      EXPECT_LE(f64(r, "ioTimeFraction"), 1.0);
    }
  }
  if (format::find_builtin_schema(format::kieker_class::kCpuUtilization) != nullptr) {
    EXPECT_EQ(cpu_all, 1);
  }
  if (format::find_builtin_schema(format::kieker_class::kMemSwapUsage) != nullptr) {
    EXPECT_EQ(memory, 1);
  }
  EXPECT_EQ(process_memory, 1);
}

}  // namespace
}  // namespace sonde::monitor::samplers
