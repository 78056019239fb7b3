// A throw-away Redis server on 127.0.0.1 for a diagnosis run (config key
// "broker": {"kind": "redis", "start": true}, `sonde demo --broker redis`):
// redis-server on a free loopback port, without persistence (nothing in
// it must survive), in a fresh directory; stopped by the destructor. It is
// started like the system under test (engine::SystemUnderTest: its own
// process group, stdio to its log, CPU affinity, exec errors reported).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "diagnose/engine/sut.hpp"

namespace sonde::diagnose::broker {

struct BrokerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RedisServer {
 public:
  // Starts the server and waits until it answers PING. Throws BrokerError
  // saying why it cannot (no redis-server binary, no temporary directory,
  // no answer: the message names the log to read, which is then kept).
  // `cpus` not empty: the server runs on those CPUs only (taskset), like a
  // broker on a machine of its own.
  static std::unique_ptr<RedisServer> start(const std::vector<int>& cpus = {});
  ~RedisServer();  // stopped (SIGINT, then SIGKILL), then the directory is removed
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  explicit RedisServer(std::string dir) : dir_(std::move(dir)) {}
  // One attempt on a fresh port: "" when it answers as our process, else why not.
  std::string try_start(const std::vector<int>& cpus);
  std::string dir_;
  int port_ = -1;
  std::unique_ptr<engine::SystemUnderTest> process_;
  bool keep_dir_ = false;  // a failed start keeps its log for the message
};

}  // namespace sonde::diagnose::broker
