// The ledger's event bus (examples/ledger/events.cpp), the second system
// under test's messaging, against a real Redis on 127.0.0.1: every event
// is pushed exactly once per hop (what the broker sampler counts as
// messages), every credit comes back once the consumers are done, and a
// bad setup exits with a message that names the problem.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "diagnose/broker/redis_server.hpp"
#include "diagnose/load/driver.hpp"
#include "load_test_support.hpp"

namespace sonde::test {
namespace {

namespace load = sonde::diagnose::load;
using diagnose::broker::RedisServer;

const fs::path kLedgerBinary = fs::path(SONDE_BINARY_DIR) / "examples" / "ledger";
const char* const kComponents[] = {"notifier",   "risk",    "balances",
                                   "compliance", "archive", "router"};

std::string redis_cli(const RedisServer& server, const std::string& args) {
  const std::string command = "redis-cli -p " + std::to_string(server.port()) + " " + args;
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

long long integer_reply(const RedisServer& server, const std::string& args) {
  const std::string out = redis_cli(server, args);
  return out.empty() ? -1 : std::stoll(out);
}

// Calls of RPUSH so far: the messages, as the broker sampler counts them.
long long pushes(const RedisServer& server) {
  const std::string stats = redis_cli(server, "INFO commandstats");
  const size_t at = stats.find("cmdstat_rpush:calls=");
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + 20));
}

// Waits until every component's credits are back (its consumer handled
// everything sent to it); false after 10 s. The lengths are read in one
// script, atomically: read one by one, a router could give its credit back
// after the forward's receiver was read as done.
bool drained(const RedisServer& server, long long capacity) {
  std::string keys;
  for (const char* c : kComponents) keys += std::string(" ledger:credits:") + c;
  const std::string script =
      "\"local n = 0 for _, k in ipairs(KEYS) do if redis.call('LLEN', k) == tonumber(ARGV[1]) "
      "then n = n + 1 end end return n\"";
  const long long components = static_cast<long long>(std::size(kComponents));
  for (int i = 0; i < 200; ++i) {
    if (integer_reply(server, "EVAL " + script + " " + std::to_string(components) + keys + " " +
                                  std::to_string(capacity)) == components)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

struct RunningLedger {
  RunningLedger(const fs::path& dir, const std::vector<std::string>& flags) {
    for (int attempt = 1;; ++attempt) {
      port = diagnose::engine::free_loopback_port();
      std::vector<std::string> argv = {
          kLedgerBinary.string(), "--port", std::to_string(port), "--accounts", "50",
          "--transfers",          "2000",   "--fx-delay-ms",      "0"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      process = std::make_unique<diagnose::engine::SystemUnderTest>(
          argv, (dir / "ledger-output.txt").string());
      try {
        process->wait_ready("127.0.0.1", port, 30);
        return;
      } catch (const diagnose::engine::PortTakenError&) {
        if (attempt == 3) throw;
      }
    }
  }
  int port = 0;
  std::unique_ptr<diagnose::engine::SystemUnderTest> process;
};

TEST(LedgerEvents, EveryEventPassesTheRouterOnceAndEveryCreditComesBack) {
  const ScratchDir scratch("ledger-router");
  std::unique_ptr<RedisServer> redis;
  ASSERT_NO_THROW(redis = RedisServer::start()) << "bash scripts/install-deps.sh installs it";
  RunningLedger ledger(scratch.path, {"--redis", redis->address(), "--event-router",
                                      "--event-handling-us", "200", "--queue-capacity", "4"});
  const long long before = pushes(*redis);
  const auto profile = profile_of(R"({"mode": "sequence", "requests": [
      {"name": "POST /transfers", "method": "POST", "path": "/transfers",
       "body": "from={random:1:25}&to={random:26:50}&amount=100"}]})");
  load::LoadOptions o;
  o.port = ledger.port;
  o.users = 2;
  o.duration_s = 0;
  o.requests_per_user = 15;
  const auto result = load::run_load(profile, o);
  ASSERT_EQ(result.requests.size(), 30u) << result.first_error;
  for (const auto& r : result.requests) EXPECT_EQ(r.status, 200);
  // A queue of 4 for 90 events, none lost.
  ASSERT_TRUE(drained(*redis, 4)) << redis_cli(*redis, "KEYS ledger:*");
  // Each transfer: three events to the router, three forwards.
  EXPECT_EQ(pushes(*redis) - before, 30 * 6);
  for (const char* c : kComponents) {
    EXPECT_EQ(integer_reply(*redis, std::string("LLEN ledger:queue:") + c), 0) << c;
    EXPECT_EQ(integer_reply(*redis, std::string("LLEN ledger:held:") + c), 0) << c;
  }
}

// Large movements (>= 250.00) of the statement the answer shows: one
// message for all of them, or one each with --event-per-line.
TEST(LedgerEvents, StatementsReportTheirLargeMovementsInOneMessageOrOneEach) {
  const ScratchDir scratch("ledger-lines");
  std::unique_ptr<RedisServer> redis;
  ASSERT_NO_THROW(redis = RedisServer::start()) << "bash scripts/install-deps.sh installs it";
  for (const bool per_line : {false, true}) {
    std::vector<std::string> flags = {"--redis", redis->address(), "--event-handling-us", "0"};
    if (per_line) flags.push_back("--event-per-line");
    RunningLedger ledger(scratch.path, flags);
    const long long before = pushes(*redis);
    const nlohmann::json statement =
        nlohmann::json::parse(http_get(ledger.port, "/accounts/7/statement"));
    ASSERT_EQ(statement["lines"].size(), 50u) << statement.dump();
    long long large = 0;
    for (const auto& line : statement["lines"])
      large += std::llabs(line["delta_cents"].get<long long>()) >= 25000;
    ASSERT_GT(large, 1) << "the seed gives account 7 large movements";
    ASSERT_TRUE(drained(*redis, 128));
    EXPECT_EQ(pushes(*redis) - before, per_line ? large : 1) << "per line: " << per_line;
  }
}

// A consumer that does not keep up: its queue of one is full, and the
// next sender waits 2 s for a credit, then its request answers 503 naming
// the queue. The credits come back once the consumer is done.
TEST(LedgerEvents, AFullQueueMakesTheSenderWaitThenAnswers503) {
  const ScratchDir scratch("ledger-full");
  std::unique_ptr<RedisServer> redis;
  ASSERT_NO_THROW(redis = RedisServer::start()) << "bash scripts/install-deps.sh installs it";
  RunningLedger ledger(scratch.path, {"--redis", redis->address(), "--queue-capacity", "1",
                                      "--event-handling-us", "2500000"});
  const auto profile = profile_of(R"({"mode": "sequence", "requests": [
      {"name": "POST /transfers", "method": "POST", "path": "/transfers",
       "body": "from=1&to=2&amount=100"}]})");
  load::LoadOptions o;
  o.port = ledger.port;
  o.users = 1;
  o.duration_s = 0;
  o.requests_per_user = 2;
  const auto start = std::chrono::steady_clock::now();
  const auto result = load::run_load(profile, o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.requests.size(), 2u) << result.first_error;
  EXPECT_EQ(result.requests[0].status, 200);
  // The second transfer's first event found notifier's one credit held.
  EXPECT_EQ(result.requests[1].status, 503);
  EXPECT_GE(seconds, 2.0);
  ASSERT_TRUE(drained(*redis, 1));
}

TEST(LedgerEvents, BadSetupsExitWithAMessageThatNamesTheProblem) {
  const ScratchDir scratch("ledger-bad");
  const fs::path out = scratch.path / "out.txt";
  auto run = [&](const std::string& args) {
    const int status =
        std::system((kLedgerBinary.string() + " --port 0 --accounts 10 --transfers 20 " + args +
                     " >" + out.string() + " 2>&1")
                        .c_str());
    std::ifstream in(out);
    return std::make_pair(WEXITSTATUS(status), std::string(std::istreambuf_iterator<char>(in), {}));
  };
  const std::string nobody = "127.0.0.1:" + std::to_string(diagnose::engine::free_loopback_port());
  auto [status, text] = run("--redis " + nobody);
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("cannot connect to Redis at " + nobody), std::string::npos) << text;
  std::tie(status, text) = run("--bulk-events");
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("need --redis"), std::string::npos) << text;
  std::tie(status, text) = run("--redis nocolon");
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("HOST:PORT"), std::string::npos) << text;
}

}  // namespace
}  // namespace sonde::test
