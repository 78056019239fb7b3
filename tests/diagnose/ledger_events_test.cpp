// The ledger's event bus (examples/ledger/events.cpp), the second system
// under test's messaging, against a real Redis on 127.0.0.1: every event
// is pushed exactly once per hop (what the broker sampler counts as
// messages), every credit comes back once the consumers are done, and a
// bad setup exits with a message that names the problem.
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "diagnose/broker/redis_connection.hpp"
#include "diagnose/broker/redis_server.hpp"
#include "diagnose/load/driver.hpp"
#include "load_test_support.hpp"

namespace sonde::test {
namespace {

namespace load = sonde::diagnose::load;
using diagnose::broker::RedisAddress;
using diagnose::broker::RedisConnection;
using diagnose::broker::RedisServer;

const fs::path kLedgerBinary = fs::path(SONDE_BINARY_DIR) / "examples" / "ledger";
// The router first: it gives a credit back only after its forward was
// pushed, so once its credits are back, the forwards are in the other
// queues and their credits read after it count them.
const char* const kComponents[] = {"router",   "notifier",   "risk",
                                   "balances", "compliance", "archive"};

// Calls of RPUSH so far: the messages, as the broker sampler counts them.
long long pushes(RedisConnection& redis) {
  const auto stats = redis.info("commandstats");
  const auto it = stats.find("cmdstat_rpush");
  return it == stats.end() ? 0 : std::stoll(it->second.substr(it->second.find('=') + 1));
}

// Waits until every component's credits are back (its consumer handled
// everything sent to it); false after 10 s.
bool drained(RedisConnection& redis, long long capacity) {
  for (int i = 0; i < 200; ++i) {
    bool all = true;
    for (const char* c : kComponents)
      all = all && redis.list_length(std::string("ledger:credits:") + c) == capacity;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The ledger (50 accounts, 2,000 seeded transfers) with `flags`.
struct RunningLedger : RunningServer {
  RunningLedger(const fs::path& dir, std::vector<std::string> flags)
      : RunningServer(dir, kLedgerBinary, with_size(std::move(flags)), "ledger-output.txt") {}
  static std::vector<std::string> with_size(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--accounts", "50", "--transfers", "2000", "--fx-delay-ms", "0"});
    return flags;
  }
};

TEST(LedgerEvents, EveryEventPassesTheRouterOnceAndEveryCreditComesBack) {
  const ScratchDir scratch("ledger-router");
  std::unique_ptr<RedisServer> redis;
  ASSERT_NO_THROW(redis = RedisServer::start()) << "bash scripts/install-deps.sh installs it";
  RunningLedger ledger(scratch.path, {"--redis", redis->address(), "--event-router",
                                      "--event-handling-us", "200", "--queue-capacity", "4"});
  RedisConnection r(RedisAddress::parse(redis->address()), 2000);
  ASSERT_TRUE(r.ok()) << r.error();
  const long long before = pushes(r);
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
  for (const auto& request : result.requests) EXPECT_EQ(request.status, 200);
  // A queue of 4 for 90 events, none lost.
  ASSERT_TRUE(drained(r, 4));
  // Each transfer: three events to the router, three forwards.
  EXPECT_EQ(pushes(r) - before, 30 * 6);
  for (const char* c : kComponents) {
    EXPECT_EQ(r.list_length(std::string("ledger:queue:") + c), 0) << c;
    EXPECT_EQ(r.list_length(std::string("ledger:held:") + c), 0) << c;
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
    RedisConnection r(RedisAddress::parse(redis->address()), 2000);
    ASSERT_TRUE(r.ok()) << r.error();
    const long long before = pushes(r);
    const nlohmann::json statement =
        nlohmann::json::parse(sonde::test::http_get(ledger.port, "/accounts/7/statement").body);
    ASSERT_EQ(statement["lines"].size(), 50u) << statement.dump();
    long long large = 0;
    for (const auto& line : statement["lines"])
      large += std::llabs(line["delta_cents"].get<long long>()) >= 25000;
    ASSERT_GT(large, 1) << "the seed gives account 7 large movements";
    ASSERT_TRUE(drained(r, 128));
    EXPECT_EQ(pushes(r) - before, per_line ? large : 1) << "per line: " << per_line;
  }
}

// A consumer that does not keep up: its queue of one is full, so the next
// transfer's first event waits for a credit and the request answers 503
// naming the queue. The credits come back once the consumer is done.
TEST(LedgerEvents, AFullQueueMakesTheSenderWaitThenAnswers503) {
  const ScratchDir scratch("ledger-full");
  std::unique_ptr<RedisServer> redis;
  ASSERT_NO_THROW(redis = RedisServer::start()) << "bash scripts/install-deps.sh installs it";
  RunningLedger ledger(scratch.path, {"--redis", redis->address(), "--queue-capacity", "1",
                                      "--event-handling-us", "2500000"});
  const std::string transfer = "from=1&to=2&amount=100";
  EXPECT_EQ(sonde::test::http_post_form(ledger.port, "/transfers", transfer).status, 200);
  const sonde::test::HttpReply refused =
      sonde::test::http_post_form(ledger.port, "/transfers", transfer);
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_NE(refused.body.find("event queue 'notifier' stayed full for 2 s"), std::string::npos)
      << refused.body;
  RedisConnection r(RedisAddress::parse(redis->address()), 2000);
  EXPECT_TRUE(drained(r, 1));
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
