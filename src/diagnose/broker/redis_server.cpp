#include "diagnose/broker/redis_server.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "diagnose/broker/redis_connection.hpp"
#include "diagnose/engine/cpu_list.hpp"
#include "diagnose/engine/sut.hpp"

namespace sonde::diagnose::broker {
namespace {

namespace fs = std::filesystem;

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string rest = path != nullptr ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= rest.size();) {
    std::size_t end = rest.find(':', at);
    if (end == std::string::npos) end = rest.size();
    const fs::path candidate = fs::path(rest.substr(at, end - at)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::unique_ptr<RedisServer> RedisServer::start(const std::vector<int>& cpus) {
  if (!on_path("redis-server"))
    throw BrokerError(
        "redis-server not found; install Debian's redis-server package "
        "(bash scripts/install-deps.sh)");
  if (!cpus.empty() && !on_path("taskset"))
    throw BrokerError("pinning the broker to CPUs needs taskset (Debian package util-linux)");
  std::error_code tmp_error;
  const fs::path tmp = fs::temp_directory_path(tmp_error);
  if (tmp_error)
    throw BrokerError("no directory for temporary files (TMPDIR): " + tmp_error.message());
  std::string dir = (tmp / "sonde-redis-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr)
    throw BrokerError("cannot create a directory for Redis in " + tmp.string() + ": " +
                      std::strerror(errno));
  std::unique_ptr<RedisServer> server(new RedisServer(dir));
  server->port_ = engine::free_loopback_port();
  const std::string log = dir + "/server.log";
  std::vector<std::string> argv;
  if (!cpus.empty()) argv = {"taskset", "-c", engine::cpu_list_text(cpus)};
  // Loopback only, no persistence, no Unix socket; protected mode stays on.
  for (const char* a : {"redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                        "--daemonize", "no", "--dir"})
    argv.emplace_back(a);
  argv.push_back(dir);
  argv.insert(argv.end(), {"--port", std::to_string(server->port_), "--logfile", log});
  const pid_t pid = ::fork();
  if (pid < 0) throw BrokerError(std::string("cannot start redis-server: ") + std::strerror(errno));
  if (pid == 0) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::setpgid(0, 0);  // the terminal's Ctrl-C is the engine's to handle
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  server->pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      server->keep_dir_ = true;
      throw BrokerError("redis-server exited at start, see " + log);
    }
    RedisConnection probe({"127.0.0.1", server->port_}, 200);
    if (probe.ok() && probe.ping()) return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  server->keep_dir_ = true;
  throw BrokerError("redis-server did not answer within 15 s, see " + log);
}

void RedisServer::kill_server() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

RedisServer::~RedisServer() {
  kill_server();
  std::error_code ec;
  if (!keep_dir_) fs::remove_all(dir_, ec);
}

}  // namespace sonde::diagnose::broker
