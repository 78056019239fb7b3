#include "diagnose/broker/redis_sampler.hpp"

#include <chrono>
#include <cstdlib>
#include <memory>

namespace sonde::diagnose::broker {
namespace {

std::int64_t epoch_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A numeric INFO field, or -1 when absent.
double field(const std::map<std::string, std::string>& info, const std::string& name) {
  const auto it = info.find(name);
  return it == info.end() ? -1 : std::strtod(it->second.c_str(), nullptr);
}

// "calls=12,usec=34,..." of a commandstats entry: its calls, 0 if absent
// (a command never called has no entry).
double calls(const std::map<std::string, std::string>& stats, const std::string& command) {
  const auto it = stats.find("cmdstat_" + command);
  if (it == stats.end()) return 0;
  const auto at = it->second.find("calls=");
  return at == std::string::npos ? 0 : std::strtod(it->second.c_str() + at + 6, nullptr);
}

}  // namespace

RedisSampler::RedisSampler(RedisAddress address, std::string queue_pattern, int interval_ms)
    : address_(std::move(address)),
      queue_pattern_(std::move(queue_pattern)),
      interval_ms_(interval_ms) {}

RedisSampler::~RedisSampler() { stop(); }

void RedisSampler::start() {
  // Connect here, not in the thread: an unreachable broker is known at once.
  auto connection = std::make_shared<RedisConnection>(address_, 2000);
  if (!connection->ok()) {
    error_ = connection->error();
    return;
  }
  thread_ = std::thread([this, connection] { loop(*connection); });
}

void RedisSampler::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void RedisSampler::loop(RedisConnection& connection) {
  while (!stopping_) {
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(interval_ms_);
    if (!sample_once(connection)) return;
    while (!stopping_ && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool RedisSampler::sample_once(RedisConnection& connection) {
  const auto stats = connection.info("stats");
  const auto cpu = connection.info("cpu");
  const auto commandstats = connection.info("commandstats");
  const auto clients = connection.info("clients");
  const std::vector<std::string> queues = connection.lists(queue_pattern_);
  std::map<std::string, long long> lengths;
  for (const std::string& q : queues) lengths[q] = connection.list_length(q);
  if (!connection.ok()) {
    error_ = connection.error();
    return false;
  }
  const std::int64_t now = epoch_ns();
  double messages = 0;
  for (const char* c : {"rpush", "lpush", "rpushx", "lpushx", "publish", "spublish", "xadd"})
    messages += calls(commandstats, c);
  const double commands = field(stats, "total_commands_processed");
  const double used_cpu = field(cpu, "used_cpu_sys") + field(cpu, "used_cpu_user");
  auto delta = [&](const char* metric, double value, double& last) {
    if (value < 0) return;
    if (last >= 0) samples_.push_back({now, "redis", metric, "", value - last});
    last = value;
  };
  delta("messages", messages, last_messages_);
  delta("commands", commands, last_commands_);
  delta("cpu_s", used_cpu, last_cpu_s_);
  const double connected = field(clients, "connected_clients");
  if (connected >= 0) samples_.push_back({now, "redis", "clients", "", connected});
  for (const auto& [q, n] : lengths) queues_[q] = true;
  for (const auto& [q, known] : queues_) {
    const auto it = lengths.find(q);
    const double n = it == lengths.end() || it->second < 0 ? 0.0 : static_cast<double>(it->second);
    samples_.push_back({now, "redis", "queue_length", q, n});
  }
  return true;
}

}  // namespace sonde::diagnose::broker
