// The in-memory TraceStore (`sonde serve LOG`): it holds what the log holds,
// filters like the trace catalogue, and picks up a log that grows.
#include "store/memory_store.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sonde::store {
namespace {

const std::string kMemoryBookstore = std::string(SONDE_TESTDATA_DIR) + "/kieker/bookstore-oer-2010/log";
constexpr uint64_t kBookstoreTraces = 1635;  // testdata/kieker/README.md

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(MemoryStore, HoldsEveryTraceOfTheBookstoreLog) {
  MemoryStore store(kMemoryBookstore);
  EXPECT_TRUE(store.load().ok);
  EXPECT_TRUE(store.load().errors.empty());
  const StoreInfo info = store.info();
  EXPECT_EQ(info.traces, kBookstoreTraces);
  EXPECT_EQ(info.invalid_traces, 0u);
  EXPECT_EQ(info.generation, 0u);

  TraceQuery all;
  all.limit = 0;
  EXPECT_EQ(store.find_traces(all).matched, kBookstoreTraces);
  EXPECT_TRUE(store.find_traces(all).entries.empty());

  TraceQuery longest;
  longest.order = analysis::TraceOrder::kLongest;
  longest.limit = 3;
  const auto top = store.find_traces(longest).entries;
  ASSERT_EQ(top.size(), 3u);
  EXPECT_GE(top[0].duration, top[1].duration);
  EXPECT_GE(top[1].duration, top[2].duration);

  const auto found = store.trace(top[0].trace_id);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].entry.duration, top[0].duration);
  EXPECT_EQ(found[0].executions.size(), found[0].entry.executions);
  EXPECT_TRUE(store.trace(-5).empty());
}

TEST(MemoryStore, RefreshPicksUpAGrowingLog) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sonde-memstore-XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  std::filesystem::copy_file(kMemoryBookstore + "/kieker.map", dir + "/kieker.map");
  std::string dat;
  for (const auto& e : std::filesystem::directory_iterator(kMemoryBookstore)) {
    if (e.path().extension() == ".dat") dat = e.path().string();
  }
  ASSERT_FALSE(dat.empty());
  const std::vector<std::string> lines = lines_of(dat);
  const std::string out = dir + "/kieker-20100830-082225582-UTC-Thread-2.dat";
  {
    // Only the metadata record: a log a collector has just started.
    std::ofstream f(out);
    f << lines[0] << "\n";
  }
  MemoryStore store(dir);
  EXPECT_EQ(store.info().traces, 0u);
  EXPECT_FALSE(store.refresh());  // nothing changed
  {
    std::ofstream f(out, std::ios::app);
    for (size_t i = 1; i < lines.size(); ++i) f << lines[i] << "\n";
    f << "$1;1;x;N/A;9;1;2;SRV0;0;0\n";  // one more trace of a single execution
  }
  // The file's size changed, whatever the clock's resolution.
  EXPECT_TRUE(store.refresh());
  const StoreInfo info = store.info();
  EXPECT_EQ(info.generation, 1u);
  EXPECT_EQ(info.traces, kBookstoreTraces + 1);
  EXPECT_EQ(store.trace(9).size(), 1u);
  EXPECT_FALSE(store.refresh());
  std::filesystem::remove_all(dir);
}

TEST(MemoryStore, MissingLogIsReportedNotThrown) {
  MemoryStore store("/nonexistent/sonde/log");
  EXPECT_FALSE(store.load().ok);
  EXPECT_FALSE(store.load().errors.empty());
  EXPECT_EQ(store.info().traces, 0u);
}

}  // namespace
}  // namespace sonde::store
