// One synchronous connection to a Redis server (hiredis), as the broker
// sampler and the throw-away server's readiness check use it. Not shared
// between threads: hiredis contexts are not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

struct redisContext;

namespace sonde::diagnose::broker {

// "host:port" -> its parts; throws std::invalid_argument naming the text.
struct RedisAddress {
  std::string host;
  int port = 6379;
  static RedisAddress parse(const std::string& text);
  std::string text() const { return host + ":" + std::to_string(port); }
};

class RedisConnection {
 public:
  // Connects with `timeout_ms` for the connect and every reply; on failure
  // error() says why (e.g. "Connection refused") and every call fails.
  RedisConnection(const RedisAddress& address, int timeout_ms);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // PING answered with PONG.
  bool ping();
  // INFO <section> as field -> value ("# ..." headers and blank lines
  // skipped); empty with error() set when it fails.
  std::map<std::string, std::string> info(const std::string& section);
  // Keys of type list that match `pattern` (SCAN ... MATCH ... TYPE list).
  std::vector<std::string> lists(const std::string& pattern);
  // LLEN of `key`, -1 on failure.
  long long list_length(const std::string& key);

 private:
  // Runs argv as one command; nullptr (with error_ set) on failure.
  struct Reply;
  std::unique_ptr<Reply> command(const std::vector<std::string>& argv);

  redisContext* context_ = nullptr;
  std::string error_;
  std::string where_;
};

}  // namespace sonde::diagnose::broker
