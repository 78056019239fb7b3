// The third system under test (examples/tickets): a real process on a free
// loopback port, driven over real TCP. Its answers are right under
// concurrency (no seat sold twice, with and without the planted lock), its
// planted problems change how long answers take, not what they say, and bad
// requests and options get an error that names the problem.
#include <sys/wait.h>

#include <cstdlib>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "diagnose/load/driver.hpp"
#include "load_test_support.hpp"

namespace sonde::test {
namespace {

namespace load = sonde::diagnose::load;
using nlohmann::json;

const fs::path kTicketsBinary = fs::path(SONDE_BINARY_DIR) / "examples" / "tickets";

// A small ticket office: 20 events of 40 seats, 50 seeded orders of three
// neighbouring seats each (events 2-11 get three orders, the others two),
// 500 reviews.
struct RunningTickets : RunningServer {
  RunningTickets(const fs::path& dir, std::vector<std::string> flags)
      : RunningServer(dir, kTicketsBinary, with_size(std::move(flags)), "tickets-output.txt") {}
  static std::vector<std::string> with_size(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--events", "20", "--seats-per-event", "40", "--seeded-orders",
                                 "50", "--reviews", "500", "--fraud-delay-ms", "1",
                                 "--payment-delay-ms", "1", "--price-paths", "50"});
    return flags;
  }
};

// Bytes sent as they are on one connection; `half_close` ends the sending
// side after them. Returns everything the server sent until it closed.
std::string raw_exchange(int port, const std::string& bytes, bool half_close) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return "(no connection)";
  }
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (half_close) ::shutdown(fd, SHUT_WR);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
    answer.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

int free_seats(int port, int event) {
  const HttpReply r = http_request(port, "GET", "/events/" + std::to_string(event));
  if (r.status != 200) return -1;
  const json answer = json::parse(r.body);
  int free = 0;
  for (const auto& s : answer.at("sections")) free += s.at("free").get<int>();
  return free;
}

TEST(TicketsServer, EveryServiceOfTheLoadProfileAnswers) {
  const ScratchDir scratch("tickets-profile");
  RunningTickets tickets(scratch.path, {});
  const auto profile = profile_of(R"({"mode": "sequence", "requests": [
      {"name": "GET /events/:id", "path": "/events/{random:1:20}"},
      {"name": "GET /events/:id/seats", "path": "/events/{random:1:20}/seats"},
      {"name": "POST /orders", "method": "POST", "path": "/orders",
       "body": "event={random:1:20}&seats={random:1:4}&customer=c{random:1:50}"},
      {"name": "GET /orders/:id", "path": "/orders/{random:1:50}"},
      {"name": "GET /search", "path": "/search?q={random:0:1999}"},
      {"name": "GET /price", "path": "/price?event={random:1:20}&section={random:1:5}"}]})");
  load::LoadOptions o;
  o.port = tickets.port;
  o.users = 3;
  o.duration_s = 0;
  o.requests_per_user = 12;
  const auto result = load::run_load(profile, o);
  ASSERT_EQ(result.requests.size(), 36u) << result.first_error;
  for (const auto& r : result.requests) {
    const int expected = r.service == "POST /orders" ? 201 : 200;
    EXPECT_EQ(r.status, expected) << r.service;
  }
}

// Four clients order two seats of one 40-seat event at a time until it is
// sold out: every seat is sold once, and the event's free count agrees.
void orders_never_sell_a_seat_twice(const std::vector<std::string>& flags) {
  const ScratchDir scratch("tickets-orders");
  RunningTickets tickets(scratch.path, flags);
  const int event = 7;  // seeded orders 6, 26 and 46 sold seats 1-9
  const int before = free_seats(tickets.port, event);
  ASSERT_EQ(before, 31);
  std::vector<std::vector<int>> seats_per_client(4);
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&, c] {
      for (int i = 0; i < 40; ++i) {
        const HttpReply r = http_request(
            tickets.port, "POST", "/orders", "", "127.0.0.1",
            "event=" + std::to_string(event) + "&seats=2&customer=c" + std::to_string(c));
        if (r.status == 201) {
          const json order = json::parse(r.body);
          for (const auto& s : order.at("seats")) seats_per_client[c].push_back(s.get<int>());
        } else if (r.status == 409 && r.body.find("not enough free seats") != std::string::npos) {
          return;                      // sold out
        } else if (r.status != 409) {  // 409 otherwise: others took the seats four times; again
          ADD_FAILURE() << "order answered " << r.status << ": " << r.body;
          return;
        }
      }
      ADD_FAILURE() << "client " << c << " never saw the event sold out";
    });
  for (auto& t : clients) t.join();
  std::set<int> sold;
  std::size_t total = 0;
  for (const auto& seats : seats_per_client) {
    total += seats.size();
    sold.insert(seats.begin(), seats.end());
  }
  EXPECT_EQ(sold.size(), total) << "a seat was sold twice";
  EXPECT_EQ(total, 30u) << "15 orders of two fit into 31 seats";
  EXPECT_EQ(free_seats(tickets.port, event), 1);
}

TEST(TicketsServer, ConcurrentOrdersNeverSellASeatTwice) { orders_never_sell_a_seat_twice({}); }

TEST(TicketsServer, ConcurrentOrdersNeverSellASeatTwiceUnderThePlantedLock) {
  orders_never_sell_a_seat_twice({"--allocation-lock"});
}

// The planted problems cost time, not correctness: the N+1 listing, the
// full-scan search and the unpruned holds answer what the right code does,
// before and after the same order on both.
TEST(TicketsServer, PlantedProblemsGiveTheSameAnswers) {
  const ScratchDir scratch("tickets-same");
  fs::create_directories(scratch.path / "planted");
  RunningTickets right(scratch.path, {});
  RunningTickets planted(scratch.path / "planted",
                         {"--seat-n-plus-one", "--review-scan", "--unpruned-holds",
                          "--price-simulation", "--write-coalescing"});
  // A word the reviews have, and one they do not.
  std::string found;
  for (int n = 0; n < 100 && found.empty(); ++n) {
    const HttpReply r = http_request(right.port, "GET", "/search?q=" + std::to_string(n));
    ASSERT_EQ(r.status, 200) << r.body;
    if (json::parse(r.body).at("matches").get<int>() > 0) found = std::to_string(n);
  }
  ASSERT_FALSE(found.empty()) << "no word of 0-99 in 500 reviews";
  const std::string order = "event=3&seats=3&customer=alice";
  const HttpReply a = http_request(right.port, "POST", "/orders", "", "127.0.0.1", order);
  const HttpReply b = http_request(planted.port, "POST", "/orders", "", "127.0.0.1", order);
  ASSERT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(b.body, a.body);
  const std::vector<std::string> targets = {"/events/3/seats",    "/events/20/seats",
                                            "/search?q=" + found, "/search?q=zuzuzu",
                                            "/orders/5",          "/events/3"};
  for (const std::string& target : targets) {
    const HttpReply x = http_request(right.port, "GET", target);
    const HttpReply y = http_request(planted.port, "GET", target);
    EXPECT_EQ(x.status, 200) << target;
    EXPECT_EQ(y.status, x.status) << target;
    EXPECT_EQ(y.body, x.body) << target;
  }
  const HttpReply simulated = http_request(planted.port, "GET", "/price?event=4&section=2");
  ASSERT_EQ(simulated.status, 200) << simulated.body;
  const double multiplier = json::parse(simulated.body).at("multiplier").get<double>();
  EXPECT_GE(multiplier, 1.0);
  EXPECT_LE(multiplier, 1.5 * 1.25) << "full and on the day of the show is the most demand can add";
}

TEST(TicketsServer, BadRequestsGetAnErrorThatNamesTheProblem) {
  const ScratchDir scratch("tickets-bad");
  RunningTickets tickets(scratch.path, {});
  const HttpReply no_event = http_request(tickets.port, "GET", "/events/999");
  EXPECT_EQ(no_event.status, 404);
  EXPECT_NE(no_event.body.find("no event 999"), std::string::npos) << no_event.body;
  const HttpReply no_customer =
      http_request(tickets.port, "POST", "/orders", "", "127.0.0.1", "event=1&seats=2");
  EXPECT_EQ(no_customer.status, 400);
  EXPECT_NE(no_customer.body.find("customer"), std::string::npos) << no_customer.body;
  EXPECT_EQ(http_request(tickets.port, "GET", "/search?q=DROP%20TABLE").status, 400);
  EXPECT_EQ(http_request(tickets.port, "DELETE", "/orders/1").status, 405);

  const std::string garbage = raw_exchange(tickets.port, "NONSENSE\r\n\r\n", false);
  EXPECT_EQ(garbage.rfind("HTTP/1.1 400 ", 0), 0u) << garbage;
  EXPECT_NE(garbage.find("Connection: close"), std::string::npos) << garbage;
  const std::string huge = raw_exchange(
      tickets.port, "POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n", false);
  EXPECT_EQ(huge.rfind("HTTP/1.1 413 ", 0), 0u) << huge;
  const std::string twice = raw_exchange(
      tickets.port, "POST /orders HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
      false);
  EXPECT_EQ(twice.rfind("HTTP/1.1 400 ", 0), 0u) << twice;
  // The server is still there for well-formed requests.
  EXPECT_EQ(http_request(tickets.port, "GET", "/health").status, 200);
}

// A client that sends its requests and half-closes gets every answer, the
// pipelined ones in order, before the server closes.
TEST(TicketsServer, AHalfClosedClientGetsEveryAnswer) {
  const ScratchDir scratch("tickets-half");
  RunningTickets tickets(scratch.path, {});
  const std::string answer = raw_exchange(
      tickets.port,
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /orders/2 HTTP/1.1\r\nHost: x\r\n\r\n", true);
  const std::size_t health = answer.find("\"status\":\"ok\"");
  const std::size_t order = answer.find("\"order\":2");
  ASSERT_NE(health, std::string::npos) << answer;
  ASSERT_NE(order, std::string::npos) << answer;
  EXPECT_LT(health, order) << "answers out of order";
}

TEST(TicketsServer, StopsCleanlyOnSigint) {
  const ScratchDir scratch("tickets-stop");
  RunningTickets tickets(
      scratch.path, {"--refresh-pauses", "--refresh-period-ms", "50", "--refresh-rounds", "20000"});
  EXPECT_EQ(http_request(tickets.port, "GET", "/events/1").status, 200);
  EXPECT_EQ(tickets.process->stop(10), "stopped (exit status 0, as asked)")
      << tickets.process->output_tail();
  EXPECT_NE(tickets.process->output_tail().find("tickets: stopped"), std::string::npos);
}

TEST(TicketsServer, BadOptionsExitWithAMessage) {
  const ScratchDir scratch("tickets-options");
  const fs::path out = scratch.path / "stderr.txt";
  auto run = [&](const std::string& args) {
    const int status =
        std::system((kTicketsBinary.string() + " " + args + " 2> " + out.string()).c_str());
    std::ifstream in(out);
    return std::pair{
        WIFEXITED(status) ? WEXITSTATUS(status) : -1,
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
  };
  const auto [workers, workers_message] = run("--workers 0");
  EXPECT_EQ(workers, 1);
  EXPECT_NE(workers_message.find("--workers needs a number from 1 to 1024"), std::string::npos)
      << workers_message;
  const auto [unknown, unknown_message] = run("--no-such-flag");
  EXPECT_EQ(unknown, 1);
  EXPECT_NE(unknown_message.find("unknown option '--no-such-flag'"), std::string::npos)
      << unknown_message;
  const auto [missing, missing_message] = run("--data-dir");
  EXPECT_EQ(missing, 1);
  EXPECT_NE(missing_message.find("--data-dir needs a value"), std::string::npos) << missing_message;
}

}  // namespace
}  // namespace sonde::test
