// `sonde listen`: a real listener process on loopback receiving (a) a
// monitored program's tcp writer and (b) hand-driven Kieker TCP clients;
// what arrives is counted against what was sent. Bad clients and a port in
// use get clear errors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "format/kieker_tcp.hpp"
#include "format/log_reader.hpp"
#include "sonde_cli_fixture.hpp"

extern char** environ;

namespace sonde::test {
namespace {

using nlohmann::json;

const std::string kListenWorkload =
    std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_workload";

class Listener {
 public:
  // Starts `sonde listen --port 0 ARGS`, stderr to a file, and waits for the port.
  Listener(const fs::path& dir, std::vector<std::string> args) : err_(dir / "listen.err") {
    args.insert(args.begin(), {SONDE_CLI, "listen", "--port", "0"});
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, SONDE_CLI, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    static const std::regex line(R"(listening on 127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 500 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = slurp(err_);
      if (std::regex_search(text, m, line)) port_ = std::stoi(m[1]);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~Listener() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  // Waits for the listener to exit (it stops after --connections closed).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  void terminate() { ::kill(pid_, SIGTERM); }
  std::string stderr_text() const { return slurp(err_); }

 private:
  fs::path err_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
};

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + sent, bytes.size() - sent);
    ASSERT_GT(n, 0);
    sent += static_cast<size_t>(n);
  }
}

// A Kieker log encoded as one connection's TCP stream.
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

class SondeListen : public SondeCli {
 protected:
  json summary(const std::string& log) {
    const CliRun r = sonde({"traces", log, "--summary", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
};

TEST_F(SondeListen, MonitoredProgramOverTcpArrivesComplete) {
  const std::string log = (dir_ / "received.sonde").string();
  Listener listener(dir_, {"--out", log, "--connections", "1"});
  ASSERT_GT(listener.port(), 0) << listener.stderr_text();

  const int threads = 3, iterations = 2000, depth = 3;
  pid_t pid = -1;
  std::vector<std::string> args = {kListenWorkload, std::to_string(threads),
                                   std::to_string(iterations), std::to_string(depth), "throw"};
  std::vector<std::string> env = {"SONDE_WRITER=tcp",
                                  "SONDE_TCP_PORT=" + std::to_string(listener.port()),
                                  "SONDE_SUMMARY=false", "PATH=/usr/bin:/bin"};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  ASSERT_EQ(posix_spawn(&pid, kListenWorkload.c_str(), nullptr, nullptr, argv.data(), envp.data()),
            0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(listener.wait(), 0) << listener.stderr_text();

  const json s = summary(log);
  // Per thread: 2 traces per iteration plus one failing call (see the workload program).
  EXPECT_EQ(s["traces"].get<int64_t>(), int64_t{threads} * (2 * iterations + 1));
  EXPECT_EQ(s["invalid_traces"].get<int64_t>(), 0);
  const int64_t calls = int64_t{threads} * iterations * (depth + 2) + threads;
  const json& types = s["record_types"];
  EXPECT_EQ(types["kieker.common.record.flow.trace.operation.BeforeOperationEvent"].get<int64_t>(),
            calls);
  EXPECT_EQ(types["kieker.common.record.flow.trace.operation.AfterOperationEvent"].get<int64_t>() +
                types["kieker.common.record.flow.trace.operation.AfterOperationFailedEvent"]
                    .get<int64_t>(),
            calls);
}

TEST_F(SondeListen, ConcurrentKiekerClientsKeepTheirOwnStringIds) {
  const std::string log = (dir_ / "received").string();
  Listener listener(dir_, {"--out", log, "--to", "kieker-dat", "--connections", "2"});
  ASSERT_GT(listener.port(), 0) << listener.stderr_text();
  // Two logs whose string ids overlap (both start at 0 on their connection).
  Encoder a, b;
  ASSERT_TRUE(format::read_log((kKieker / "bookstore-oer-2010" / "log").string(), a).ok);
  ASSERT_TRUE(format::read_log((kKieker / "events-2014" / "log").string(), b).ok);
  const int fa = connect_to(listener.port());
  const int fb = connect_to(listener.port());
  // Interleave the two streams in odd-sized pieces.
  size_t pa = 0, pb = 0;
  while (pa < a.bytes.size() || pb < b.bytes.size()) {
    const size_t na = std::min<size_t>(4093, a.bytes.size() - pa);
    const size_t nb = std::min<size_t>(37, b.bytes.size() - pb);
    send_all(fa, a.bytes.substr(pa, na));
    send_all(fb, b.bytes.substr(pb, nb));
    pa += na;
    pb += nb;
  }
  ::close(fa);
  ::close(fb);
  ASSERT_EQ(listener.wait(), 0) << listener.stderr_text();

  const json got = summary(log);
  const json want_a = summary((kKieker / "bookstore-oer-2010" / "log").string());
  const json want_b = summary((kKieker / "events-2014" / "log").string());
  EXPECT_EQ(got["records"].get<uint64_t>(), a.records + b.records);
  EXPECT_EQ(got["traces"].get<uint64_t>(),
            want_a["traces"].get<uint64_t>() + want_b["traces"].get<uint64_t>());
  EXPECT_EQ(got["invalid_traces"].get<uint64_t>(), 0u);
  for (const json* want : {&want_a, &want_b}) {
    for (const auto& [type, count] : (*want)["record_types"].items()) {
      EXPECT_GE(got["record_types"][type].get<uint64_t>(), count.get<uint64_t>()) << type;
    }
  }
}

TEST_F(SondeListen, BrokenClientIsNamedOthersAreKept) {
  const std::string log = (dir_ / "received.sonde").string();
  Listener listener(dir_, {"--out", log, "--connections", "2"});
  ASSERT_GT(listener.port(), 0) << listener.stderr_text();
  Encoder good;
  ASSERT_TRUE(format::read_log((kKieker / "events-2014" / "log").string(), good).ok);
  const int bad = connect_to(listener.port());
  send_all(bad, std::string("\x00\x00\x00\x07garbage that is no frame", 28));
  ::close(bad);
  const int fd = connect_to(listener.port());
  send_all(fd, good.bytes);
  ::close(fd);
  EXPECT_EQ(listener.wait(), 1);
  const std::string err = listener.stderr_text();
  EXPECT_NE(err.find("protocol error"), std::string::npos) << err;
  EXPECT_NE(err.find("127.0.0.1:"), std::string::npos) << err;
  EXPECT_EQ(summary(log)["records"].get<uint64_t>(), good.records);
}

TEST_F(SondeListen, SigtermStopsCleanlyAndBadArgumentsAreNamed) {
  const std::string log = (dir_ / "idle.sonde").string();
  Listener idle(dir_, {"--out", log});
  ASSERT_GT(idle.port(), 0);
  idle.terminate();
  EXPECT_EQ(idle.wait(), 0) << idle.stderr_text();
  EXPECT_EQ(summary(log)["records"].get<uint64_t>(), 0u);

  CliRun r = sonde({"listen", "--out", log, "--port", "70000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'70000'"), std::string::npos) << r.err;
  r = sonde({"listen", "--out", log, "--bind", "not-an-address"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not-an-address"), std::string::npos) << r.err;
  r = sonde({"listen", "--port", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test
