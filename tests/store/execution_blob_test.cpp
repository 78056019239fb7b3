// The packed executions of the embedded index (store/execution_blob.hpp):
// every field survives the round trip, including the cases that take
// optional fields (failed, exit never seen) and negative deltas, and every
// kind of damage is reported with where it is instead of read past.
#include "store/execution_blob.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "../analysis/export/export_fixtures.hpp"

namespace sonde::store {
namespace {

// A names table in memory, as the writer and reader keep it.
struct BlobNames {
  std::map<std::string, uint64_t, std::less<>> ids;
  std::vector<std::string> texts{std::string()};
  uint64_t id(std::string_view s) {
    if (auto it = ids.find(s); it != ids.end()) return it->second;
    texts.emplace_back(s);
    return ids[std::string(s)] = texts.size() - 1;
  }
  const std::string* text(uint64_t id) const { return id < texts.size() ? &texts[id] : nullptr; }
};

std::string pack(const std::vector<analysis::Execution>& xs, BlobNames& names) {
  std::string out;
  pack_executions(
      xs, [&names](std::string_view s) { return names.id(s); }, out);
  return out;
}

std::string unpack(std::string_view blob, const BlobNames& names,
                   std::vector<StoredExecution>& out) {
  return unpack_executions(
      blob, [&names](uint64_t id) { return names.text(id); }, out);
}

std::vector<analysis::Execution> sample_executions() {
  constexpr int64_t t0 = 1'700'000'000'000'000'000;
  std::vector<analysis::Execution> xs;
  xs.push_back(analysis::test::exec("void a.A.main()", "a.A", t0, t0 + 900'000, 0, 0, "host-1"));
  xs.push_back(
      analysis::test::exec("int a.B.get(int)", "a.B", t0 + 100'000, t0 + 200'000, 1, 1, "host-1"));
  xs.back().failed = true;
  xs.back().cause = "java.io.IOException: <disk> \"full\"";
  // Entered before its predecessor (clock skew across hosts): a negative delta.
  xs.push_back(analysis::test::exec("void a.C.run()", "a.C", t0 + 50'000, -1, 2, 2, "host-2"));
  xs.push_back(analysis::test::exec("void a.A.main()", "", t0 + 300'000, t0 + 300'000, 3, 1, ""));
  return xs;
}

// Packed relative to the trace's start (as the index writer packs them),
// the executions read back the same with that base, and the first entry
// time takes one byte instead of nine.
TEST(ExecutionBlob, ABaseTimeRoundTripsAndShortensTheFirstEntryTime) {
  BlobNames names;
  const std::vector<analysis::Execution> xs = sample_executions();
  const int64_t start = xs.front().tin;
  std::string based;
  pack_executions(
      xs, [&names](std::string_view s) { return names.id(s); }, based, nullptr, start);
  const std::string whole = pack(xs, names);
  EXPECT_EQ(whole.size(), based.size() + 8);
  std::vector<StoredExecution> out;
  ASSERT_EQ(unpack_executions(
                based, [&names](uint64_t id) { return names.text(id); }, out, start),
            "");
  ASSERT_EQ(out.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(out[i].tin, xs[i].tin) << i;
    EXPECT_EQ(out[i].tout, xs[i].tout) << i;
  }
}

TEST(ExecutionBlob, EveryFieldRoundTrips) {
  BlobNames names;
  const std::vector<analysis::Execution> xs = sample_executions();
  const std::string blob = pack(xs, names);
  std::vector<StoredExecution> back;
  ASSERT_EQ(unpack(blob, names, back), "");
  ASSERT_EQ(back.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back[i].operation, xs[i].operation);
    EXPECT_EQ(back[i].component, xs[i].component);
    EXPECT_EQ(back[i].host, xs[i].host);
    EXPECT_EQ(back[i].tin, xs[i].tin);
    EXPECT_EQ(back[i].tout, xs[i].tout);
    EXPECT_EQ(back[i].eoi, xs[i].eoi);
    EXPECT_EQ(back[i].ess, xs[i].ess);
    EXPECT_EQ(back[i].failed, xs[i].failed);
    EXPECT_EQ(back[i].cause, xs[i].cause);
  }
  // Repeated strings are stored once; "" never gets an id.
  EXPECT_EQ(names.texts.size(), 1 + 3 + 3 + 2 + 1u);  // operations, components, hosts, cause
}

// The index writer's aggregates take each execution's operation id from
// the packing instead of asking for it again; hosts alternate here, so the
// packing's memo of the last host must follow them.
TEST(ExecutionBlob, OperationIdsComeOutInExecutionOrder) {
  BlobNames names;
  std::vector<analysis::Execution> xs = sample_executions();
  xs.push_back(xs[0]);  // host-1 again after "" and host-2
  std::string blob;
  std::vector<uint64_t> operation_ids;
  pack_executions(
      xs, [&names](std::string_view s) { return names.id(s); }, blob, &operation_ids);
  ASSERT_EQ(operation_ids.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(operation_ids[i], names.id(xs[i].operation)) << i;
  }
  std::vector<StoredExecution> back;
  ASSERT_EQ(unpack(blob, names, back), "");
  ASSERT_EQ(back.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(back[i].host, xs[i].host) << i;
}

// Times at both ends of int64 (a hostile sender's): their deltas wrap
// modulo 2^64 on the way in and back, so they round-trip exactly.
TEST(ExecutionBlob, ExtremeTimesRoundTripExactly) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  BlobNames names;
  std::vector<analysis::Execution> xs;
  xs.push_back(
      analysis::test::exec("a", "", kMax - 1, 0, 0, 0, ""));  // negative touts mean "no exit"
  xs.push_back(analysis::test::exec("b", "", kMin, kMax, 1, 1, ""));
  xs.push_back(analysis::test::exec("c", "", kMax, -1, 2, 1, ""));
  const std::string blob = pack(xs, names);
  std::vector<StoredExecution> back;
  ASSERT_EQ(unpack(blob, names, back), "");
  ASSERT_EQ(back.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(back[i].tin, xs[i].tin) << i;
    EXPECT_EQ(back[i].tout, xs[i].tout) << i;
  }
}

TEST(ExecutionBlob, NoExecutionsIsAnEmptyBlob) {
  BlobNames names;
  EXPECT_EQ(pack({}, names), "");
  std::vector<StoredExecution> back;
  EXPECT_EQ(unpack("", names, back), "");
  EXPECT_TRUE(back.empty());
}

TEST(ExecutionBlob, EveryTruncationIsReportedNotReadPast) {
  BlobNames names;
  const std::string blob = pack(sample_executions(), names);
  size_t reported = 0;
  for (size_t cut = 1; cut < blob.size(); ++cut) {
    std::vector<StoredExecution> back;
    const std::string error = unpack(std::string_view(blob).substr(0, cut), names, back);
    // A cut at an execution boundary is a shorter, valid list; any other is an error.
    if (error.empty()) {
      EXPECT_LT(back.size(), 4u);
      continue;
    }
    ++reported;
    EXPECT_NE(error.find("truncated execution"), std::string::npos) << error;
    EXPECT_NE(error.find("byte"), std::string::npos) << error;
  }
  EXPECT_GE(reported, blob.size() - 4);
}

TEST(ExecutionBlob, UnknownNamesAndFlagsAreNamed) {
  BlobNames names;
  const std::string blob = pack(sample_executions(), names);
  BlobNames fewer = names;
  fewer.texts.resize(2);  // the reader knows only the first name
  std::vector<StoredExecution> back;
  const std::string missing = unpack(blob, fewer, back);
  EXPECT_NE(missing.find("unknown name id 2 at byte 2"), std::string::npos) << missing;

  std::string flagged = blob;
  flagged[0] = 4;  // a flag bit this format does not define
  back.clear();
  const std::string flags = unpack(flagged, names, back);
  EXPECT_NE(flags.find("unknown flags 4 at byte 0"), std::string::npos) << flags;
}

}  // namespace
}  // namespace sonde::store
