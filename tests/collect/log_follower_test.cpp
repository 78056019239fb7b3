// The analysis side of the collector without threads: a LogFollower reads
// a client's native log as it grows, in whatever pieces the listener
// happens to have written (a chunk cut anywhere), and reconstructs exactly
// the traces in it; a log that cannot be read back is named.
#include "collect/log_follower.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../format/format_test_support.hpp"
#include "collector_test_support.hpp"
#include "store/index_sink.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;

struct Follow {
  explicit Follow(const std::string& dir) {
    std::string error;
    std::unique_ptr<store::TraceIndex> store = store::open_trace_index(dir, &error);
    EXPECT_NE(store, nullptr) << error;
    index = std::make_unique<LockedTraceIndex>(std::move(store));
    analysis = std::make_unique<ClientAnalysis>(*index, 1, AnalysisSettings{}, nullptr, true);
  }
  std::unique_ptr<LockedTraceIndex> index;
  std::unique_ptr<ClientAnalysis> analysis;
  std::atomic<uint64_t> backlog{0};
};

TEST(LogFollower, ALogWrittenInPiecesYieldsEveryTraceOnce) {
  TempDir dir("sonde-follow");
  Follow f(dir.path());
  const std::string log = native_stream("follow/1", 5, 40);
  const std::string path = dir / "client-1.sonde";
  std::ofstream file(path, std::ios::binary);
  LogFollower follower(path, "test", *f.analysis, f.backlog);
  std::string scratch;

  // Pieces of 997 bytes: chunks are cut in the middle, as a reader of a
  // log being written sees them.
  size_t written = 0;
  int steps = 0;
  while (written < log.size()) {
    const size_t n = std::min<size_t>(997, log.size() - written);
    file.write(log.data() + written, static_cast<std::streamsize>(n));
    file.flush();
    written += n;
    follower.publish(written);
    EXPECT_EQ(f.backlog.load(), n);
    while (follower.step(300, scratch) == LogFollower::Step::kProgress) ++steps;
    EXPECT_EQ(f.backlog.load(), 0u);
  }
  EXPECT_GE(steps, static_cast<int>(log.size() / 300));
  // Before the end: the traces of the chunks read (a trace closes when its
  // root call returns), none twice.
  EXPECT_LE(f.analysis->counts().traces, 200u);
  EXPECT_GE(f.analysis->counts().traces, 190u);
  follower.end_of_input();
  EXPECT_EQ(follower.step(300, scratch), LogFollower::Step::kFinished);
  EXPECT_EQ(follower.error(), "");
  EXPECT_EQ(f.analysis->counts().traces, 200u);
  EXPECT_EQ(f.analysis->counts().invalid_traces, 0u);
  EXPECT_EQ(follower.backlog(), 0u);
}

TEST(LogFollower, ALogThatCannotBeReadBackIsNamedAndItsBacklogReleased) {
  TempDir dir("sonde-follow-gone");
  Follow f(dir.path());
  const std::string path = dir / "client-1.sonde";
  LogFollower follower(path, "test", *f.analysis, f.backlog);
  std::string scratch;
  follower.publish(4096);  // the listener says so, but the file is not there
  follower.end_of_input();
  EXPECT_EQ(follower.step(1024, scratch), LogFollower::Step::kFinished);
  EXPECT_NE(follower.error().find("cannot read " + path + " back"), std::string::npos)
      << follower.error();
  EXPECT_EQ(f.backlog.load(), 0u);
  EXPECT_EQ(f.analysis->counts().traces, 0u);
}

TEST(LogFollower, NothingIsReadBeyondWhatWasPublished) {
  TempDir dir("sonde-follow-published");
  Follow f(dir.path());
  const std::string log = native_stream("follow/2", 2, 10);
  const std::string path = dir / "client-1.sonde";
  std::ofstream(path, std::ios::binary) << log;
  LogFollower follower(path, "test", *f.analysis, f.backlog);
  std::string scratch;
  EXPECT_EQ(follower.step(1 << 20, scratch), LogFollower::Step::kIdle);  // nothing published yet
  follower.publish(log.size());
  EXPECT_EQ(follower.step(1 << 20, scratch), LogFollower::Step::kProgress);
  EXPECT_EQ(follower.step(1 << 20, scratch), LogFollower::Step::kIdle);  // input not ended
  follower.end_of_input();
  EXPECT_EQ(follower.step(1 << 20, scratch), LogFollower::Step::kFinished);
  EXPECT_EQ(f.analysis->counts().traces, 20u);
}

}  // namespace
}  // namespace sonde::collect
