// Shared by the collector tests: a collector on its own thread, hand-driven
// Kieker TCP clients (a log encoded as one connection's stream, blocking
// loopback connect/send), monitored workload processes, the store.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "collect/collector.hpp"
#include "format/kieker_tcp.hpp"
#include "format/native_format.hpp"
#include "format/native_writer.hpp"
#include "format/record.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::collect {

// A stream's preamble chunk: its id and the number of its first data chunk.
inline void preamble(format::NativeWriter& w, const std::string& stream_id,
                     const std::string& first_chunk) {
  w.meta("stream.id", stream_id);
  w.meta("stream.first_chunk", first_chunk);
  w.flush(true);
}

// What these streams' events refer to: a clock, thread 0 and operation 0.
inline void define_main_thread(format::NativeWriter& w, uint64_t os_tid) {
  w.clock(0, 1'700'000'000'000'000'000, 1.0);
  w.thread(0, os_tid, "main");
  w.operation(0, "shop.order", format::native::OperationKind::kManual, "shop", 0, "", 0);
}

// A native stream as the monitor's tcp writer sends it: header, preamble
// chunk (stream id, first chunk 1), then `chunks` data chunks of `traces`
// one-call traces each.
inline std::string native_stream(const std::string& stream_id, int chunks, int traces) {
  format::StringSink sink;
  format::NativeWriter w(sink, {format::native::Codec::kZstd, 1, 1u << 20, false, false});
  preamble(w, stream_id, "1");
  w.meta("host", "native-host");
  define_main_thread(w, 4242);
  uint64_t t = 1000, trace = 1;
  for (int c = 0; c < chunks; ++c) {
    w.begin_events(0, t);
    for (int i = 0; i < traces; ++i) {
      w.trace_begin(t, trace++, -1, -1);
      w.enter(t + 1, 0);
      w.exit(t + 2, 0);
      t += 10;
    }
    w.end_events();
    w.flush(true);
  }
  return format::NativeWriter::file_header() + sink.bytes;
}

// Runs a Collector on its own thread until `connections` have closed.
class RunningCollector {
 public:
  RunningCollector(const std::string& dir, uint64_t connections,
                   std::chrono::milliseconds commit = std::chrono::milliseconds(500),
                   size_t max_open_traces = 10'000,
                   std::optional<OtlpForwardOptions> forward = std::nullopt)
      : RunningCollector([&] {
          CollectorOptions o = options(dir, connections);
          o.forward = std::move(forward);
          o.max_open_traces = max_open_traces;
          o.commit_interval = commit;
          return o;
        }()) {}
  // Any options: start from options(dir, connections).
  explicit RunningCollector(const CollectorOptions& o) {
    collector_ = std::make_unique<Collector>(o);
    error_ = collector_->open();
    if (error_.empty()) thread_ = std::thread([this] { collector_->run(stop_); });
  }
  // A collector on a free loopback port into `dir`, until `connections`
  // have closed.
  static CollectorOptions options(const std::string& dir, uint64_t connections) {
    CollectorOptions o;
    o.out = dir;
    o.listen.port = 0;
    o.listen.stop_after_connections = connections;
    return o;
  }
  ~RunningCollector() { stop(); }
  const std::string& open_error() const { return error_; }
  uint16_t port() const { return collector_->port(); }
  // Waits for the connection budget (or stops it now with `now`).
  std::string join(bool now = false) {
    if (now) stop_ = true;
    if (thread_.joinable()) thread_.join();
    return collector_->finish();
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  Collector& collector() { return *collector_; }

 private:
  std::unique_ptr<Collector> collector_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string error_;
};

inline std::unique_ptr<store::SqliteStore> open_store(const std::string& dir) {
  std::string error;
  auto s = store::SqliteStore::open(dir, &error);
  EXPECT_NE(s, nullptr) << error;
  return s;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The codec byte of every chunk of a native log (docs/formats/native.md:
// a 16-byte file header, then per chunk a 24-byte header whose byte 4 is
// the codec and bytes 12-15 the stored size). Empty if the file is not
// whole chunks.
inline std::vector<uint8_t> chunk_codecs(const std::string& path) {
  const std::string bytes = file_bytes(path);
  std::vector<uint8_t> codecs;
  size_t at = format::native::kFileHeaderSize;
  while (at + format::native::kChunkHeaderSize <= bytes.size()) {
    uint32_t stored = 0;
    std::memcpy(&stored, bytes.data() + at + 12, 4);
    codecs.push_back(static_cast<uint8_t>(bytes[at + 4]));
    at += format::native::kChunkHeaderSize + stored;
  }
  if (at != bytes.size()) codecs.clear();
  return codecs;
}

class Encoder final : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    encoder_.encode(r, bytes);
    ++records;
    return true;
  }
  std::string bytes;
  uint64_t records = 0;

 private:
  format::kieker::TcpEncoder encoder_;
};

// A loopback client. `send_buffer` > 0 shrinks its send buffer: with a
// stream far larger, it cannot finish sending before the collector reads.
inline int connect_to(uint16_t port, int send_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (send_buffer > 0) {
    EXPECT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer), 0);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Sends everything, or stops quietly when the peer closed (returns false).
inline bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One client that sends `bytes` and closes.
inline bool send_and_close(uint16_t port, std::string_view bytes) {
  const int fd = connect_to(port);
  const bool sent = send_all(fd, bytes);
  ::close(fd);
  return sent;
}

inline const std::string kWorkload =
    std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_workload";

// Starts `processes` monitored workloads (tests/monitor/programs/workload.cpp,
// mode "throw") streaming to a collector on `port`; returns their pids.
// `protocol` is the writer's tcp_protocol; "mixed" alternates native
// (even processes) and kieker (odd).
inline std::vector<pid_t> spawn_workloads(uint16_t port, int processes, int threads, int iterations,
                                          int depth, const std::string& protocol = "native") {
  std::vector<pid_t> pids;
  EXPECT_TRUE(std::filesystem::exists(kWorkload))
      << kWorkload << " not built (target test_workload)";
  for (int p = 0; p < processes; ++p) {
    std::vector<std::string> args = {kWorkload, std::to_string(threads), std::to_string(iterations),
                                     std::to_string(depth), "throw"};
    const std::string chosen = protocol != "mixed" ? protocol : p % 2 == 0 ? "native" : "kieker";
    std::vector<std::string> env = {"SONDE_WRITER=tcp", "SONDE_TCP_PORT=" + std::to_string(port),
                                    "SONDE_TCP_PROTOCOL=" + chosen, "SONDE_SUMMARY=false",
                                    "PATH=/usr/bin:/bin"};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    for (auto& e : env) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, kWorkload.c_str(), nullptr, nullptr, argv.data(), envp.data()), 0);
    if (pid > 0) pids.push_back(pid);
  }
  return pids;
}

// Waits for every pid; each must exit with status 0.
inline void expect_clean_exits(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

}  // namespace sonde::collect
