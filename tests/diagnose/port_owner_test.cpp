// Whose listener answers on the SUT's port (diagnose/engine/port_owner.hpp):
// a port taken by another process between its choice and the SUT's bind
// must not pass for the SUT being ready.
#include "diagnose/engine/port_owner.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "diagnose/engine/sut.hpp"
#include "load_test_support.hpp"

namespace sonde::test {
namespace {

namespace engine = sonde::diagnose::engine;

// A socket listening on 127.0.0.1 at a free port; closed on destruction.
// With `reuse_port`, SO_REUSEPORT as cpp-httplib's servers set it.
struct PortListener {
  int fd = -1;
  int port = 0;
  explicit PortListener(bool reuse_port = false) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int yes = 1;
    if (reuse_port) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    // A long backlog: nothing accepts, and the readiness check connects
    // every 20 ms (a full backlog would make its connect wait for minutes).
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::listen(fd, 1024) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
  }
  ~PortListener() { ::close(fd); }
};

// A child that sleeps (the "SUT"), in its own process group as the engine
// starts one, through exec as the engine's are, so it keeps no socket of
// this process (SOCK_CLOEXEC); killed and reaped on destruction.
struct SleepingChild {
  pid_t pid = -1;
  SleepingChild() {
    int exec_done[2];
    EXPECT_EQ(::pipe2(exec_done, O_CLOEXEC), 0);
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid, pid);
    // The pipe's write end closes at the child's exec: EOF means it no
    // longer holds this process's sockets.
    ::close(exec_done[1]);
    char byte;
    while (::read(exec_done[0], &byte, 1) > 0) {
    }
    ::close(exec_done[0]);
  }
  ~SleepingChild() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST(PortOwner, AListenerOfAnOlderUnrelatedProcessIsForeign) {
  PortListener mine;  // this test process: older than the child, not below it
  ASSERT_NE(mine.port, 0);
  SleepingChild sut;
  const auto listeners = engine::listeners_on(mine.port, sut.pid);
  EXPECT_FALSE(listeners.sut);
  ASSERT_TRUE(listeners.foreign.has_value());
  EXPECT_EQ(listeners.foreign->rfind("pid " + std::to_string(::getpid()) + " (", 0), 0u)
      << *listeners.foreign;
}

TEST(PortOwner, TheSutsOwnListenerAndAFreePortAreNotForeign) {
  PortListener listener;
  ASSERT_NE(listener.port, 0);
  // The process that listens is the SUT itself.
  const auto own = engine::listeners_on(listener.port, ::getpid());
  EXPECT_TRUE(own.sut);
  EXPECT_FALSE(own.foreign.has_value());
  const int port = listener.port;
  ::close(listener.fd);
  listener.fd = -1;
  SleepingChild sut;
  const auto none = engine::listeners_on(port, sut.pid);
  EXPECT_FALSE(none.sut);
  EXPECT_FALSE(none.foreign.has_value());
}

TEST(PortOwner, ReadinessWaitsForTheSutAndNamesTheProcessThatHasItsPort) {
  PortListener squatter;
  ASSERT_NE(squatter.port, 0);
  const std::string output =
      (std::filesystem::temp_directory_path() / ("port-owner-" + std::to_string(::getpid())))
          .string();
  engine::SystemUnderTest sut({"sleep", "30"}, output);
  try {
    sut.wait_ready("127.0.0.1", squatter.port, 0.5);
    FAIL() << "a port another process listens on passed for the SUT's";
  } catch (const engine::PortTakenError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("port " + std::to_string(squatter.port) + " on 127.0.0.1 is taken by pid " +
                        std::to_string(::getpid())),
              std::string::npos)
        << what;
  }
  std::filesystem::remove(output);
}

// The shop (cpp-httplib: SO_REUSEPORT) binds a port another SO_REUSEPORT
// socket of this user listens on; both listening, the kernel would give
// the load's connections to either. Readiness refuses the port and stops
// the shop.
TEST(PortOwner, APortTheSutSharesWithAnotherListenerIsRefused) {
  PortListener squatter(/*reuse_port=*/true);
  ASSERT_NE(squatter.port, 0);
  const std::string output =
      (std::filesystem::temp_directory_path() / ("port-shared-" + std::to_string(::getpid())))
          .string();
  engine::SystemUnderTest shop(
      {kShopBinary.string(), "--port", std::to_string(squatter.port), "--products", "50"}, output);
  try {
    shop.wait_ready("127.0.0.1", squatter.port, 60);
    FAIL() << "a port shared with another listener passed for the SUT's";
  } catch (const engine::PortTakenError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is shared: the system under test and pid " + std::to_string(::getpid())),
              std::string::npos)
        << what;
  }
  EXPECT_TRUE(shop.exited().has_value()) << "the shop was left running";
  std::filesystem::remove(output);
}

}  // namespace
}  // namespace sonde::test
