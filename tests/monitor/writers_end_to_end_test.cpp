// Writers and policies end to end: Kieker logs, the TCP writer against a real
// receiver on loopback, sync mode, samplers, patterns reloaded at run time,
// traceparent propagation, and a full disk.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "format/kieker_tcp.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

int64_t count_class(const LogContents& c, const std::string& suffix) {
  int64_t n = 0;
  for (const auto& [cls, k] : c.records_by_class) {
    if (cls.size() >= suffix.size() &&
        cls.compare(cls.size() - suffix.size(), suffix.size(), suffix) == 0)
      n += k;
  }
  return n;
}

// (writer, kieker_compression)
class KiekerWriters : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(KiekerWriters, SameEventsAsTheNativeWriter) {
  const auto& [writer, compression] = GetParam();
  std::string out = fresh_dir("kieker_" + writer + "_" + compression);
  RunResult r = run_program(
      {kWorkload, "3", "400", "2", "throw"},
      env_for(out, {"SONDE_WRITER=" + writer, "SONDE_KIEKER_COMPRESSION=" + compression}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(out)) dirs.push_back(e.path().string());
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(dirs[0] + "/kieker.map"));
  // Data files carry the compound name Kieker's reader resolves (.dat.gz, .bin.xz, ...).
  const std::string kind = writer == "kieker-dat" ? ".dat" : ".bin";
  const std::map<std::string, std::string> suffix = {{"none", ""},      {"gzip", ".gz"},
                                                     {"zlib", ".df"},   {"xz", ".xz"},
                                                     {"bzip2", ".bz2"}, {"zip", ".zip"}};
  size_t data_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dirs[0])) {
    const std::string name = e.path().filename().string();
    if (name == "kieker.map" || name == "sonde.meta")
      continue;  // sonde.meta: the monitor's own notes
    ++data_files;
    EXPECT_TRUE(name.ends_with(kind + suffix.at(compression))) << name;
  }
  EXPECT_GE(data_files, 1u);
  LogContents c = read_contents(dirs[0]);
  ASSERT_TRUE(c.stats.ok) << (c.stats.errors.empty() ? "" : c.stats.errors[0]);
  const int64_t calls = 3 * 400 * 4 + 3;
  EXPECT_EQ(c.before, calls);
  EXPECT_EQ(c.after + c.failed, calls);
  EXPECT_EQ(c.failed, 3);
  EXPECT_EQ(count_class(c, "KiekerMetadataRecord"), 1);
  for (const auto& [id, t] : c.traces) ASSERT_EQ(trace_problem(t), "") << id;
}

INSTANTIATE_TEST_SUITE_P(
    DatAndBin, KiekerWriters,
    ::testing::Values(std::pair{"kieker-dat", "none"}, std::pair{"kieker-bin", "none"},
                      std::pair{"kieker-dat", "gzip"}, std::pair{"kieker-bin", "xz"},
                      std::pair{"kieker-dat", "zip"}, std::pair{"kieker-bin", "bzip2"},
                      std::pair{"kieker-dat", "zlib"}),
    [](const auto& param_info) {
      return param_info.param.first.substr(7) + "_" + param_info.param.second;  // "dat_gzip"
    });

// A Kieker TCP receiver on 127.0.0.1 that counts what it decodes.
class Receiver final : public format::RecordSink {
 public:
  Receiver() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    socklen_t len = sizeof sa;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    listen(listen_fd_, 4);
    thread_ = std::thread([this] { serve(); });
  }
  ~Receiver() override {
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    thread_.join();
  }
  int port() const { return port_; }
  bool on_record(const format::Record& r) override {
    const std::string& cls = r.schema->class_name;
    if (cls.find("BeforeOperationEvent") != std::string::npos) ++before;
    if (cls.find("AfterOperationEvent") != std::string::npos) ++after;
    if (cls.find("TraceMetadata") != std::string::npos) ++traces;
    return true;
  }
  std::atomic<int64_t> before{0}, after{0}, traces{0};
  std::string error;

 private:
  void serve() {
    for (;;) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      format::kieker::TcpDecoder decoder("test-peer");
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) {
        if (!decoder.feed(buf, static_cast<size_t>(n), *this)) {
          error = decoder.error();
          break;
        }
      }
      close(fd);
    }
  }
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(TcpWriter, EveryEventReachesARealReceiver) {
  Receiver receiver;
  RunResult r = run_program({kWorkload, "2", "2000", "3"},
                            {"SONDE_WRITER=tcp", "SONDE_TCP_PROTOCOL=kieker",
                             "SONDE_TCP_PORT=" + std::to_string(receiver.port())});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  // Give the receiver thread a moment to drain the socket after the exit.
  for (int i = 0; i < 100 && receiver.before + receiver.after < 2 * 2 * 2000 * 5; ++i)
    usleep(20000);
  EXPECT_EQ(receiver.error, "");
  EXPECT_EQ(receiver.before.load(), 2 * 2000 * 5);
  EXPECT_EQ(receiver.after.load(), 2 * 2000 * 5);
  EXPECT_EQ(receiver.traces.load(), 2 * 2000 * 2);
  EXPECT_NE(r.stderr_text.find("0 lost"), std::string::npos) << r.stderr_text;
}

TEST(TcpWriter, UnreachableReceiverProgramRunsAndLossIsReported) {
  // A port nobody listens on: bind one, read its number, close it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  for (const std::string protocol : {"native", "kieker"}) {
    SCOPED_TRACE(protocol);
    RunResult r = run_program(
        {kWorkload, "1", "100", "1"},
        {"SONDE_WRITER=tcp", "SONDE_TCP_PROTOCOL=" + protocol, "SONDE_TCP_EXIT_WAIT_MS=300",
         "SONDE_TCP_PORT=" + std::to_string(ntohs(sa.sin_port))});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.stderr_text.find("cannot connect"), std::string::npos) << r.stderr_text;
    // 100 iterations x (recurse(1): 2 calls + leaf) x 2 events, none delivered.
    EXPECT_NE(r.stderr_text.find("0 events written, 600 lost"), std::string::npos) << r.stderr_text;
  }
}

TEST(SyncMode, WritesEverythingFromTheProbingThreads) {
  std::string out = fresh_dir("sync");
  RunResult r = run_program({kWorkload, "3", "3000", "3"},
                            env_for(out, {"SONDE_MODE=sync", "SONDE_BUFFER_EVENTS=256"}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  LogContents c = read_contents(files_with_suffix(out, ".sonde").at(0));
  EXPECT_EQ(c.before, 3 * 3000 * 5);
  EXPECT_EQ(c.after, c.before);
  for (const auto& [id, t] : c.traces) ASSERT_EQ(trace_problem(t), "");
}

TEST(Samplers, RecordsLandInTheSameLog) {
  std::string out = fresh_dir("samplers");
  // "pause" makes the run last 1.5 s: 15 sampling periods. (It once used the
  // patterns-reload mode for that; under ASan the reload's symbol scan kept
  // the writer thread, which samples, busy for the whole run.)
  RunResult r = run_program(
      {kWorkload, "1", "10", "1", "pause"},
      env_for(out, {"SONDE_SAMPLERS=cpu,memory,process", "SONDE_SAMPLER_PERIOD_MS=100"}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  LogContents c = read_contents(files_with_suffix(out, ".sonde").at(0));
  std::string seen;  // for the failure message: what did land
  for (const auto& [cls, n] : c.records_by_class) seen += cls + "=" + std::to_string(n) + " ";
  EXPECT_GT(count_class(c, "CPUUtilizationRecord"), 0) << seen << "\n" << r.stderr_text;
  EXPECT_GT(count_class(c, "MemSwapUsageRecord"), 0) << seen;
  EXPECT_GT(count_class(c, "ProcessMemoryRecord"), 0) << seen;
}

TEST(AdaptiveMonitoring, PatternsFileReloadedWithoutRestart) {
  std::string out = fresh_dir("reload");
  std::string patterns = out + "/patterns";
  std::ofstream(patterns) << "# all on\n";
  RunResult r =
      run_program({kWorkload, "1", "50", "0", "reload"},
                  env_for(out, {"SONDE_PATTERNS_FILE=" + patterns, "SONDE_PATTERNS_RELOAD_MS=50"}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  LogContents c = read_contents(files_with_suffix(out, ".sonde").at(0));
  int64_t leaf = 0, recurse = 0;
  for (const auto& [id, t] : c.traces) {
    for (const auto& e : t.events) {
      if (e.kind != "before") continue;
      (e.operation.find("leaf") != std::string::npos ? leaf : recurse)++;
    }
  }
  EXPECT_EQ(recurse, 100) << "recurse(0) stays monitored in both halves";
  EXPECT_EQ(leaf, 50) << "leaf is excluded after the reload";
}

TEST(ContextPropagation, TraceparentCarriesTheParentTrace) {
  std::string out = fresh_dir("traceparent");
  RunResult r = run_program({kWorkload, "1", "0", "0", "traceparent"}, env_for(out));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  LogContents c = read_contents(files_with_suffix(out, ".sonde").at(0));
  ASSERT_EQ(c.traces.size(), 2u);
  const TraceCopy* client = nullptr;
  const TraceCopy* server = nullptr;
  for (const auto& [id, t] : c.traces) (t.parent_trace_id == id ? client : server) = &t;
  ASSERT_TRUE(client && server);
  EXPECT_EQ(server->parent_trace_id, client->trace_id);
  EXPECT_EQ(server->parent_order_id, 0);
  EXPECT_NE(server->events.at(0).operation.find("shop.server"), std::string::npos);
}

TEST(DiskFull, ProgramKeepsRunningAndLossIsCountedAndReported) {
  std::string out = fresh_dir("disk_full");
  // A 64 KiB file-size limit makes the native writer fail like a full disk;
  // SIGXFSZ is ignored so that the write fails with EFBIG instead.
  RunResult r =
      run_program({"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 64; exec " + kWorkload + " 2 20000 3"},
                  env_for(out, {"SONDE_COMPRESSION=none", "SONDE_SUMMARY=true"}));
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("writing the log failed"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("WARNING"), std::string::npos) << r.stderr_text;
  // What reached the disk is still readable up to the last complete chunk.
  LogContents c = read_contents(files_with_suffix(out, ".sonde").at(0));
  EXPECT_TRUE(c.stats.ok) << (c.stats.errors.empty() ? "" : c.stats.errors[0]);
}

}  // namespace
}  // namespace sonde::test
