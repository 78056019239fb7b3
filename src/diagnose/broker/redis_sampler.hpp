// Samples a Redis server used as the message broker during an experiment's
// stable phase (the thesis' messaging-server statistics, digest §H10:
// message counts and queue sizes): every interval INFO stats, cpu and
// commandstats plus the length of every list that matches the queue
// pattern. Rows go to the experiment's samples.csv with source "redis"
// (docs/diagnose/experiment-data.md):
//   messages      messages put into the broker since the previous sample
//                 (calls of RPUSH, LPUSH, RPUSHX, LPUSHX, PUBLISH, SPUBLISH, XADD)
//   commands      commands the server processed since the previous sample
//                 (the sampler's own few included)
//   cpu_s         CPU seconds the server used since the previous sample
//                 (its own INFO cpu, so also for a server elsewhere)
//   clients       connected clients
//   queue_length  length of a queue (list), key = its name; one row per
//                 queue seen so far, 0 once it is empty and gone
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "diagnose/broker/redis_connection.hpp"
#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose::broker {

class RedisSampler {
 public:
  RedisSampler(RedisAddress address, std::string queue_pattern, int interval_ms);
  ~RedisSampler();
  RedisSampler(const RedisSampler&) = delete;
  RedisSampler& operator=(const RedisSampler&) = delete;

  // Connects and starts sampling; a connection failure is kept in error().
  void start();
  void stop();
  // After stop(): what was sampled, and why sampling failed ("" if it did not).
  const std::vector<SampledValue>& samples() const { return samples_; }
  const std::string& error() const { return error_; }

 private:
  void loop(RedisConnection& connection);
  bool sample_once(RedisConnection& connection);

  RedisAddress address_;
  std::string queue_pattern_;
  int interval_ms_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::vector<SampledValue> samples_;
  std::string error_;
  std::map<std::string, bool> queues_;  // every queue seen so far
  double last_messages_ = -1, last_commands_ = -1, last_cpu_s_ = -1;
};

}  // namespace sonde::diagnose::broker
