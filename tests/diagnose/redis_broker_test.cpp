// The throw-away Redis server and the broker sampler against a real server
// on 127.0.0.1 (messages are put in with redis-cli, a real client): message
// counts and queue lengths are sampled, an unreachable or vanished server
// is an error naming it, and the samples survive the samples.csv round
// trip (after the database's rows) into what Excessive Messaging reads.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "diagnose/broker/redis_connection.hpp"
#include "diagnose/broker/redis_sampler.hpp"
#include "diagnose/broker/redis_server.hpp"
#include "diagnose/database/postgres_sampler.hpp"
#include "diagnose/engine/sut.hpp"
#include "diagnose/experiment_data.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose_test_support.hpp"

namespace sonde::diagnose::test {
namespace {

using broker::RedisAddress;
using broker::RedisSampler;
using broker::RedisServer;

void rpush(const RedisServer& server, const std::string& key, int times) {
  for (int i = 0; i < times; ++i)
    ASSERT_EQ(std::system(("redis-cli -p " + std::to_string(server.port()) + " RPUSH " + key +
                           " m" + std::to_string(i) + " >/dev/null")
                              .c_str()),
              0);
}

TEST(RedisAddress, ParsesHostAndPortAndNamesWhatIsWrong) {
  EXPECT_EQ(RedisAddress::parse("mq.example:6380").host, "mq.example");
  EXPECT_EQ(RedisAddress::parse("mq.example:6380").port, 6380);
  EXPECT_EQ(RedisAddress::parse("mq.example").port, 6379);
  for (const char* bad :
       {":6379", "h:", "h:x", "h:0", "h:70000", "h:12a", "::1:7000", "h: 80", "h:+80"}) {
    try {
      RedisAddress::parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(RedisSampler, CountsMessagesAndQueueLengths) {
  std::unique_ptr<RedisServer> server;
  ASSERT_NO_THROW(server = RedisServer::start()) << "bash scripts/install-deps.sh installs it";
  RedisSampler sampler(RedisAddress::parse(server->address()), "shop:queue:*", 20);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rpush(*server, "shop:queue:orders", 30);
  rpush(*server, "other", 5);  // a message too, but not a queue the pattern names
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  sampler.stop();
  EXPECT_EQ(sampler.error(), "");
  double messages = 0, last_length = -1;
  int instants = 0, cpu_rows = 0;
  for (const SampledValue& v : sampler.samples()) {
    EXPECT_EQ(v.source, "redis");
    instants += v.metric == "clients";
    cpu_rows += v.metric == "cpu_s";
    if (v.metric == "messages") messages += v.value;
    if (v.metric == "queue_length") {
      EXPECT_EQ(v.key, "shop:queue:orders");
      last_length = v.value;
    }
  }
  EXPECT_GE(instants, 5);
  EXPECT_EQ(cpu_rows, instants - 1);  // differences need two instants
  EXPECT_EQ(messages, 35);
  EXPECT_EQ(last_length, 30);
}

TEST(RedisSampler, UnreachableServerIsAnErrorNamingIt) {
  const std::string address = "127.0.0.1:" + std::to_string(engine::free_loopback_port());
  RedisSampler sampler(RedisAddress::parse(address), "*", 20);
  sampler.start();
  sampler.stop();
  EXPECT_NE(sampler.error().find("cannot connect to Redis at " + address), std::string::npos)
      << sampler.error();
  EXPECT_TRUE(sampler.samples().empty());
}

TEST(RedisSampler, AServerThatDiesMidRunEndsSamplingWithTheReason) {
  std::unique_ptr<RedisServer> server = RedisServer::start();
  const std::string address = server->address();
  RedisSampler sampler(RedisAddress::parse(address), "*", 20);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.reset();  // SIGKILL
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sampler.stop();
  EXPECT_NE(sampler.error().find("Redis at " + address), std::string::npos) << sampler.error();
  EXPECT_FALSE(sampler.samples().empty()) << "what was sampled before stays";
}

TEST(RedisServer, RemovesItsDirectoryAndStopsListening) {
  std::string dir, address;
  {
    std::unique_ptr<RedisServer> server = RedisServer::start();
    dir = server->dir();
    address = server->address();
    EXPECT_TRUE(std::filesystem::exists(dir));
    broker::RedisConnection c(RedisAddress::parse(address), 1000);
    EXPECT_TRUE(c.ping()) << c.error();
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  broker::RedisConnection c(RedisAddress::parse(address), 1000);
  EXPECT_FALSE(c.ok());
}

// No redis-server on the PATH: an error that says what to install.
TEST(RedisServer, MissingBinaryIsAnErrorSayingWhatToInstall) {
  const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  TempDir empty;
  ::setenv("PATH", empty.path().c_str(), 1);
  std::string error;
  try {
    RedisServer::start();
  } catch (const broker::BrokerError& e) {
    error = e.what();
  }
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_NE(error.find("redis-server not found; install Debian's redis-server package"),
            std::string::npos)
      << error;
}

TEST(RedisSampler, SamplesCsvRoundTripsIntoTheBrokerView) {
  TempDir dir;
  ExperimentSpec spec;
  spec.id = "scaling-s1";
  spec.requests = 50;
  const std::string exp = write_experiment(dir.path(), spec);
  nlohmann::json e;
  std::ifstream(exp + "/experiment.json") >> e;
  e["samplers"]["postgresql"] = {{"status", "ok"}, {"cpu", true}};
  e["samplers"]["redis"] = {{"status", "ok"}};
  std::ofstream(exp + "/experiment.json") << e.dump();
  std::vector<SampledValue> db = {{kT0 + kMs, "", "active", "", 1}};
  database::write_samples_csv(exp + "/samples.csv", "postgresql", db);
  // Three instants; queue "b" appears at the second; one row outside the
  // stable phase is dropped.
  std::vector<SampledValue> rows;
  for (int t = 1; t <= 3; ++t) {
    rows.push_back({kT0 + t * kMs, "redis", "clients", "", 4});
    rows.push_back({kT0 + t * kMs, "redis", "messages", "", 10});
    rows.push_back({kT0 + t * kMs, "redis", "queue_length", "a", static_cast<double>(t)});
    if (t > 1) rows.push_back({kT0 + t * kMs, "redis", "queue_length", "b", 7});
  }
  rows.push_back({kT0 - kMs, "redis", "messages", "", 1000});
  database::write_samples_csv(exp + "/samples.csv", "redis", rows, /*append=*/true);

  const ExperimentData data = load_experiment_data(dir.path());
  ASSERT_EQ(data.experiments.size(), 1u);
  const heuristics::BrokerSamples b = heuristics::broker_samples(data.experiments[0]);
  EXPECT_TRUE(b.present);
  EXPECT_EQ(b.error, "");
  EXPECT_EQ(b.samples, 3u);
  EXPECT_DOUBLE_EQ(b.messages, 30);
  EXPECT_EQ(b.queue_length.at("a"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(b.queue_length.at("b"), (std::vector<double>{0, 7, 7}));
  EXPECT_TRUE(heuristics::database_server_samples(data.experiments[0]).present);
  EXPECT_EQ(heuristics::database_server_samples(data.experiments[0]).samples, 1u);
}

}  // namespace
}  // namespace sonde::diagnose::test
