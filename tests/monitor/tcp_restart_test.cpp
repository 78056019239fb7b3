// Fault injection: the TCP receiver goes away in the middle of a run and
// comes back on the same port. The writer must keep the program running,
// reconnect, and deliver what it kept while the receiver was away. Kieker's
// protocol has no acknowledgements, so bytes already handed to the kernel
// when the receiver died can vanish unseen; the test bounds that loss by the
// sockets' buffer sizes instead of claiming exactness (docs/RELIABILITY.md).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "format/kieker_tcp.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

const std::string kRestartWorkload = std::string(SONDE_TEST_PROGRAMS) + "/test_workload";

// Counts the flow events of every connection; can be stopped (listening
// socket and connection closed) and started again on the same port.
class RestartableReceiver : public format::RecordSink {
 public:
  bool start(uint16_t port) {
    // CLOEXEC: the monitored program started meanwhile must not inherit the
    // listening socket, or the port would stay open after stop().
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return false;
    socklen_t len = sizeof sa;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    ::listen(listen_fd_, 4);
    stop_ = false;
    thread_ = std::thread([this] { serve(); });
    return true;
  }
  void stop() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }
  bool on_record(const format::Record& r) override {
    const std::string& cls = r.schema->class_name;
    if (cls.find("BeforeOperationEvent") != std::string::npos ||
        cls.find("AfterOperationEvent") != std::string::npos)
      ++events;
    return true;
  }
  std::atomic<int64_t> events{0};
  std::atomic<int> connections{0};

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections;
      format::kieker::TcpDecoder decoder("restart-test");
      char buf[65536];
      while (!stop_) {
        pollfd q{fd, POLLIN, 0};
        if (::poll(&q, 1, 20) <= 0) continue;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0 || !decoder.feed(buf, static_cast<size_t>(n), *this)) break;
      }
      ::close(fd);  // a receiver that dies drops what its socket still holds
    }
  }
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

int64_t sysctl_max(const std::string& path) {  // last field of tcp_[rw]mem
  std::ifstream in(path);
  int64_t a = 0, b = 0, c = 0;
  in >> a >> b >> c;
  return c;
}

TEST(TcpWriterRestart, ReceiverRestartedMidRunGetsTheRestAndLossIsBounded) {
  RestartableReceiver receiver;
  ASSERT_TRUE(receiver.start(0));
  const uint16_t port = receiver.port();
  // Under the sanitizers the workload runs about ten times slower, so a
  // quarter of the iterations still outlasts the receiver's absence by
  // more than the full count does in the release build (23 s under ASan
  // with the full count, against 1 s).
  const int iterations = kSanitized ? 100000 : 400000, depth = 1;
  const int64_t produced = int64_t{iterations} * (depth + 2) * 2;

  RunResult run;
  std::thread program([&] {
    run = run_program(
        {kRestartWorkload, "1", std::to_string(iterations), std::to_string(depth)},
        {"SONDE_WRITER=tcp", "SONDE_TCP_PROTOCOL=kieker", "SONDE_TCP_PORT=" + std::to_string(port),
         "SONDE_TCP_RETRY_MS=20", "SONDE_TCP_RETRY_MAX_MS=100"});
  });
  // Let the first connection carry some events, then take the receiver away.
  for (int i = 0; i < 500 && receiver.events.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  receiver.stop();
  const int64_t before_restart = receiver.events.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const bool restarted = receiver.start(port);
  program.join();  // also when the restart failed: the program ends on its own
  ASSERT_TRUE(restarted) << "port " << port << " could not be bound again";
  // The writer flushes at exit; give the receiver a moment to read the rest.
  for (int i = 0; i < 200; ++i) {
    const int64_t seen = receiver.events.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (receiver.events.load() == seen && i > 10) break;
  }
  receiver.stop();

  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_GT(before_restart, 0);
  const int64_t received = receiver.events.load();
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(run.stderr_text, m, std::regex(R"((\d+) events written, (\d+) lost)")))
      << run.stderr_text;
  const int64_t lost = std::stoll(m[2]);
  // Reconnected: what the writer kept while the receiver was away arrived.
  EXPECT_GE(receiver.connections.load(), 2);
  EXPECT_NE(run.stderr_text.find("reconnected"), std::string::npos) << run.stderr_text;
  EXPECT_GT(received, before_restart);
  // Nothing arrives twice, nothing is invented.
  EXPECT_LE(received + lost, produced) << run.stderr_text;
  // What vanished unseen fits in the sockets' buffers at the moment the
  // receiver died (its receive buffer, our send buffer), at >= 8 bytes per
  // event on the wire.
  const int64_t in_flight_bound =
      (sysctl_max("/proc/sys/net/ipv4/tcp_wmem") + sysctl_max("/proc/sys/net/ipv4/tcp_rmem")) / 8;
  EXPECT_GE(received + lost, produced - in_flight_bound)
      << "received " << received << ", lost " << lost << ", produced " << produced;
}

}  // namespace
}  // namespace sonde::test
