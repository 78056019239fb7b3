#include "diagnose/broker/redis_server.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "analysis/render/graphviz_render.hpp"  // find_executable
#include "diagnose/broker/redis_connection.hpp"

namespace sonde::diagnose::broker {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::unique_ptr<RedisServer> RedisServer::start(const std::vector<int>& cpus) {
  if (analysis::find_executable("redis-server").empty())
    throw BrokerError(
        "redis-server not found; install Debian's redis-server package "
        "(bash scripts/install-deps.sh)");
  std::error_code tmp_error;
  const fs::path tmp = fs::temp_directory_path(tmp_error);
  if (tmp_error)
    throw BrokerError("no directory for temporary files (TMPDIR): " + tmp_error.message());
  std::string dir = (tmp / "sonde-redis-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr)
    throw BrokerError("cannot create a directory for Redis in " + tmp.string() + ": " +
                      std::strerror(errno));
  std::unique_ptr<RedisServer> server(new RedisServer(dir));
  // A free port can be taken by someone else before the server binds it:
  // then it exits, or (worse) another Redis answers there. A few tries.
  std::string why;
  for (int attempt = 0; attempt < 3; ++attempt) {
    why = server->try_start(cpus);
    if (why.empty()) return server;
  }
  server->keep_dir_ = true;  // for the log the message names
  throw BrokerError(why);
}

std::string RedisServer::try_start(const std::vector<int>& cpus) {
  process_.reset();
  port_ = engine::free_loopback_port();
  const std::string log = dir_ + "/server.log";
  // Loopback only, no persistence; protected mode stays on.
  const std::vector<std::string> argv = {"redis-server",
                                         "--bind",
                                         "127.0.0.1",
                                         "--port",
                                         std::to_string(port_),
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no",
                                         "--daemonize",
                                         "no",
                                         "--dir",
                                         dir_};
  try {
    process_ = std::make_unique<engine::SystemUnderTest>(argv, log, cpus);
  } catch (const engine::SutError& e) {
    return std::string("cannot start redis-server: ") + e.what();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto ended = process_->exited()) return "redis-server " + *ended + " at start, see " + log;
    RedisConnection probe({"127.0.0.1", port_}, 200);
    if (probe.ok() && probe.ping()) {
      // Ours, not another Redis that took the port first.
      const auto server = probe.info("server");
      const auto pid = server.find("process_id");
      if (pid != server.end() && std::atoi(pid->second.c_str()) == process_->pid()) return "";
      process_->stop(2.0);
      return "port " + std::to_string(port_) + " was taken by another Redis";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  process_->stop(2.0);
  return "redis-server did not answer within 15 s, see " + log;
}

RedisServer::~RedisServer() {
  if (process_) process_->stop(2.0);
  std::error_code ec;
  if (!keep_dir_) fs::remove_all(dir_, ec);
}

}  // namespace sonde::diagnose::broker
