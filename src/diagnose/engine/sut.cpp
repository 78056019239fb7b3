#include "diagnose/engine/sut.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "diagnose/engine/cpu_list.hpp"
#include "diagnose/engine/port_owner.hpp"

namespace sonde::diagnose::engine {
namespace {

bool port_open(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return false;
  }
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

bool is_local(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

std::string describe_exit(int status, int asked) {
  if (asked != 0) {
    int sig = 0;
    if (WIFSIGNALED(status)) sig = WTERMSIG(status);
    if (WIFEXITED(status) && WEXITSTATUS(status) > 128) sig = WEXITSTATUS(status) - 128;
    if (sig == SIGINT) return "stopped (SIGINT, as asked)";
    if (sig == SIGTERM) return "stopped (SIGTERM, as asked)";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "stopped (exit status 0, as asked)";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended (status " + std::to_string(status) + ")";
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw SutError(std::string("cannot create a socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw SutError(std::string("cannot find a free port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

SystemUnderTest::SystemUnderTest(const std::vector<std::string>& argv,
                                 const std::string& output_file, const std::vector<int>& cpus)
    : output_file_(output_file) {
  if (argv.empty()) throw SutError("no command to start the system under test");
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  for (int c : cpus) CPU_SET(c, &allowed);
  const int out = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw SutError("cannot write " + output_file + ": " + std::strerror(errno));
  // exec failures are reported through a close-on-exec pipe.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    ::close(out);
    throw SutError(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t engine = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(out);
    ::close(report[0]);
    ::close(report[1]);
    throw SutError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    ::setpgid(0, 0);  // its own group: stop() reaches its children too
    ::dup2(out, 1);
    ::dup2(out, 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    // The engine's own SIGTERM/SIGHUP handlers (cancel_on_signals) must not
    // swallow the death signal below before exec replaces them.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    // An engine killed outright (SIGKILL, OOM) cannot stop what it started;
    // the kernel then sends SIGTERM, which `sonde run` forwards to the
    // program. It fires when the forking *thread* ends: the engine starts and
    // stops every SUT on the one thread that runs the experiments.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != engine) ::_exit(127);  // the engine died before prctl
    if (!cpus.empty() && ::sched_setaffinity(0, sizeof allowed, &allowed) != 0) {
      const int e = -errno;  // negative: the affinity, not the exec, failed
      [[maybe_unused]] ssize_t w = ::write(report[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] ssize_t w = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
  ::close(out);
  ::close(report[1]);
  int e = 0;
  const ssize_t n = ::read(report[0], &e, sizeof e);
  ::close(report[0]);
  if (n == sizeof e) {
    int status;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (e < 0)
      throw SutError("cannot run the system under test '" + argv[0] + "' on CPUs " +
                     cpu_list_text(cpus) + " (sut.cpus): " + std::strerror(-e));
    throw SutError("cannot start the system under test '" + argv[0] + "': " + std::strerror(e));
  }
}

SystemUnderTest::~SystemUnderTest() {
  if (pid_ > 0 && !exit_) stop(5);
}

std::optional<std::string> SystemUnderTest::exited() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_ = describe_exit(status, stop_signal_);
    ::kill(-pid_, SIGKILL);  // anything it left behind in its group
  }
  return exit_;
}

std::string SystemUnderTest::output_tail(std::size_t bytes) const {
  std::ifstream in(output_file_, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string all = s.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

void SystemUnderTest::wait_ready(const std::string& host, int port, double timeout_s,
                                 double stop_timeout_s, const std::atomic<bool>* cancel) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  const std::string where = host + ":" + std::to_string(port);
  std::optional<std::string> foreign;
  for (;;) {
    if (auto how = exited())
      throw SutError("the system under test " + *how + " before accepting connections on " + where +
                     "; its output:\n" + output_tail());
    if (port_open(host, port)) {
      // Another process may have taken the port between its choice and
      // the SUT's bind (port_owner.hpp): wait for the SUT's own listener,
      // and refuse a port both listen on (the kernel would split the load).
      const PortListeners listeners = is_local(host) ? listeners_on(port, pid_) : PortListeners{};
      foreign = listeners.foreign;
      if (!foreign) return;
      if (listeners.sut) {
        stop(stop_timeout_s);
        throw PortTakenError("port " + std::to_string(port) + " on " + host +
                             " is shared: the system under test and " + *foreign +
                             " both listen on it (SO_REUSEPORT), and connections would be split "
                             "between them");
      }
    }
    if (cancel && cancel->load()) {
      stop(stop_timeout_s);
      throw SutError("cancelled");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop(stop_timeout_s);
      if (foreign) {
        throw PortTakenError("port " + std::to_string(port) + " on " + host + " is taken by " +
                             *foreign + ", not by the system under test, and stayed so for " +
                             std::to_string(timeout_s) + " s; its output:\n" + output_tail());
      }
      throw SutError("the system under test did not accept connections on " + where + " within " +
                     std::to_string(timeout_s) + " s; its output:\n" + output_tail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string SystemUnderTest::stop(double timeout_s) {
  if (auto how = exited()) return *how;
  stop_signal_ = SIGINT;
  ::kill(-pid_, SIGINT);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto how = exited()) return *how;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  exit_ = describe_exit(status) + " (did not stop within " + std::to_string(timeout_s) +
          " s of SIGINT)";
  return *exit_;
}

}  // namespace sonde::diagnose::engine
