#include "diagnose/broker/redis_connection.hpp"

#include <hiredis.h>
#include <sys/time.h>

#include <stdexcept>

namespace sonde::diagnose::broker {

RedisAddress RedisAddress::parse(const std::string& text) {
  const auto colon = text.rfind(':');
  RedisAddress a;
  a.host = colon == std::string::npos ? text : text.substr(0, colon);
  if (a.host.empty()) throw std::invalid_argument("'" + text + "' has no host (host:port)");
  if (a.host.find(':') != std::string::npos)
    throw std::invalid_argument("'" + text + "': IPv6 addresses are not supported (host:port)");
  if (a.host.find_first_of(" \t") != std::string::npos)
    throw std::invalid_argument("'" + text + "' has a space in it (host:port)");
  if (colon != std::string::npos) {
    const std::string port = text.substr(colon + 1);
    std::size_t used = 0;
    int p = -1;
    try {
      if (!port.empty() && (port[0] < '0' || port[0] > '9')) throw std::invalid_argument(port);
      p = std::stoi(port, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != port.size() || p < 1 || p > 65535)
      throw std::invalid_argument("'" + text + "' has no valid port (1..65535)");
    a.port = p;
  }
  return a;
}

struct RedisConnection::Reply {
  redisReply* r;
  explicit Reply(redisReply* reply) : r(reply) {}
  ~Reply() { freeReplyObject(r); }
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
};

RedisConnection::RedisConnection(const RedisAddress& address, int timeout_ms)
    : where_(address.text()) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  context_ = redisConnectWithTimeout(address.host.c_str(), address.port, tv);
  if (context_ == nullptr) {
    error_ = "cannot connect to Redis at " + where_ + ": out of memory";
  } else if (context_->err != 0) {
    error_ = "cannot connect to Redis at " + where_ + ": " + context_->errstr;
  } else {
    redisSetTimeout(context_, tv);
  }
}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

std::unique_ptr<RedisConnection::Reply> RedisConnection::command(
    const std::vector<std::string>& argv) {
  if (!ok()) return nullptr;
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const std::string& a : argv) args.push_back(a.data()), lengths.push_back(a.size());
  auto* raw = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(args.size()), args.data(), lengths.data()));
  if (raw == nullptr) {
    // The context is unusable after an I/O or protocol error.
    error_ = "Redis at " + where_ + " stopped answering (" + argv.front() +
             "): " + (context_->err != 0 ? context_->errstr : "no reply");
    return nullptr;
  }
  auto reply = std::make_unique<Reply>(raw);
  if (raw->type == REDIS_REPLY_ERROR) {
    error_ =
        "Redis at " + where_ + " refused " + argv.front() + ": " + std::string(raw->str, raw->len);
    return nullptr;
  }
  return reply;
}

bool RedisConnection::ping() {
  const auto reply = command({"PING"});
  return reply && reply->r->type == REDIS_REPLY_STATUS && std::string(reply->r->str) == "PONG";
}

std::map<std::string, std::string> RedisConnection::info(const std::string& section) {
  std::map<std::string, std::string> fields;
  const auto reply = command({"INFO", section});
  if (!reply) return fields;
  if (reply->r->type != REDIS_REPLY_STRING) {
    error_ = "Redis at " + where_ + " answered INFO with no text";
    return fields;
  }
  const std::string text(reply->r->str, reply->r->len);
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

std::vector<std::string> RedisConnection::lists(const std::string& pattern) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    const auto reply = command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000", "TYPE", "list"});
    if (!reply) return {};
    const redisReply* r = reply->r;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      error_ = "Redis at " + where_ + " answered SCAN unexpectedly";
      return {};
    }
    cursor.assign(r->element[0]->str, r->element[0]->len);
    const redisReply* batch = r->element[1];
    for (size_t i = 0; i < batch->elements; ++i)
      keys.emplace_back(batch->element[i]->str, batch->element[i]->len);
  } while (cursor != "0");
  return keys;
}

long long RedisConnection::list_length(const std::string& key) {
  const auto reply = command({"LLEN", key});
  return reply && reply->r->type == REDIS_REPLY_INTEGER ? reply->r->integer : -1;
}

}  // namespace sonde::diagnose::broker
