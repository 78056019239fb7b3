// The load driver against the real shop on a loopback port: request counts
// follow from the workload's parameters, users really run concurrently,
// requests.csv follows docs/diagnose/experiment-data.md.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "diagnose/load/driver.hpp"
#include "diagnose/load/http_client.hpp"
#include "load_test_support.hpp"

namespace sonde::test {
namespace {

namespace load = sonde::diagnose::load;

TEST(LoadDriver, FixedCountRunSendsExactlyUsersTimesRequests) {
  const ScratchDir scratch("load");
  const fs::path& dir = scratch.path;
  RunningShop shop(dir, {});
  const auto profile = profile_of(R"({"mode": "sequence", "requests": [
      {"name": "GET /product", "path": "/product?id={random:1:500}"},
      {"name": "POST /order", "method": "POST", "path": "/order?user={user}"}]})");
  load::LoadOptions o;
  o.port = shop.port;
  o.users = 3;
  o.duration_s = 0;
  o.requests_per_user = 10;
  const auto result = load::run_load(profile, o);
  ASSERT_EQ(result.requests.size(), 30u) << result.first_error;
  EXPECT_EQ(result.stable().size(), 30u);  // a count-limited run is measured as a whole
  EXPECT_EQ(load::count_errors(result.requests), 0u);
  std::map<int, std::vector<std::string>> per_user;
  for (const auto& r : result.requests) per_user[r.user].push_back(r.service);
  ASSERT_EQ(per_user.size(), 3u);
  for (auto& [user, services] : per_user) {
    ASSERT_EQ(services.size(), 10u);
    // Sequence mode: each user alternates the two requests, product first.
    EXPECT_EQ(std::count(services.begin(), services.end(), "GET /product"), 5);
  }
  // The shop saw every order: 3 users x 5 orders.
  const std::string stats = sonde::test::http_get(shop.port, "/stats").body;
  EXPECT_NE(stats.find("\"orders\":15"), std::string::npos) << stats;
}

TEST(LoadDriver, UsersRunConcurrently) {
  const ScratchDir scratch("load");
  const fs::path& dir = scratch.path;
  // Each shipping quote waits 300 ms server-side, so users starting
  // together must overlap if they really run in parallel.
  RunningShop shop(dir, {"--slow-external", "--external-delay-ms", "300"});
  const auto profile = profile_of(R"({"requests": [{"path": "/shipping?product={user}"}]})");
  load::LoadOptions o;
  o.port = shop.port;
  o.users = 4;
  o.duration_s = 0;
  o.requests_per_user = 2;
  const auto result = load::run_load(profile, o);
  ASSERT_EQ(result.requests.size(), 8u) << result.first_error;
  int most = 0;
  for (const auto& a : result.requests) {
    int overlapping = 0;
    for (const auto& b : result.requests)
      if (b.start_ns <= a.start_ns && a.start_ns < b.end_ns) ++overlapping;
    most = std::max(most, overlapping);
  }
  EXPECT_EQ(most, 4);
  for (const auto& r : result.requests) EXPECT_EQ(r.service, "GET /shipping");
}

// The stability wait: the stable phase begins once two windows in a row
// have medians within the tolerance; a fixed 20 ms per request settles at
// once. With tolerance 0 it never settles and the wait ends at its limit.
// Either way the stable phase then lasts its full duration, and the users
// kept running through the wait.
TEST(LoadDriver, StablePhaseWaitsForStability) {
  const ScratchDir scratch("load");
  RunningShop shop(scratch.path, {"--slow-external", "--external-delay-ms", "20"});
  const auto profile = profile_of(R"({"requests": [{"path": "/shipping?product={user}"}]})");
  for (const double tolerance : {0.2, 0.0}) {
    load::LoadOptions o;
    o.port = shop.port;
    o.users = 2;
    o.ramp_up_s = 0.2;
    o.duration_s = 1;
    o.stability_max_s = 1.5;
    o.stability_window_s = 0.3;
    o.stability_tolerance = tolerance;
    const std::int64_t launched = load::epoch_ns();
    const auto result = load::run_load(profile, o);
    EXPECT_EQ(load::count_errors(result.requests), 0u) << result.first_error;
    // The stable phase lasts its duration after the wait (1 ms: two clocks)...
    const double stable_s =
        static_cast<double>(result.stable_end_ns - result.stable_begin_ns) / 1e9;
    EXPECT_GE(stable_s, o.duration_s - 0.001) << "tolerance " << tolerance;
    // ... under load to its end, and the users stop there (no cool-down).
    std::int64_t last_start = 0;
    for (const auto& r : result.requests) last_start = std::max(last_start, r.start_ns);
    EXPECT_GE(last_start, result.stable_end_ns - 200'000'000) << "tolerance " << tolerance;
    EXPECT_LE(last_start, result.stable_end_ns + 50'000'000) << "tolerance " << tolerance;
    EXPECT_GE(result.stable_begin_ns - launched, static_cast<std::int64_t>(o.ramp_up_s * 1e9));
    if (tolerance > 0) {
      EXPECT_TRUE(result.stability_reached);
      EXPECT_EQ(result.stability_note, "");
      EXPECT_LT(result.stability_wait_s, o.stability_max_s);
    } else {
      EXPECT_FALSE(result.stability_reached);
      EXPECT_EQ(result.stability_note, "the response time did not settle");
      EXPECT_GE(result.stability_wait_s, o.stability_max_s);
      // Ends at the limit, not a window later (generous: a loaded CI machine).
      EXPECT_LT(result.stability_wait_s, o.stability_max_s + o.stability_window_s + 0.5);
      // Requests completed during the wait, before the stable phase.
      const auto waiting = std::count_if(
          result.requests.begin(), result.requests.end(), [&](const load::RequestRecord& r) {
            return r.end_ns > launched + static_cast<std::int64_t>(o.ramp_up_s * 1e9) &&
                   r.end_ns < result.stable_begin_ns;
          });
      EXPECT_GE(waiting, 20);  // 1.5 s x 2 users at ~20 ms each: about 150
    }
  }
  // One user at ~20 ms answers at most 2-3 times in 50 ms: too few to judge,
  // and the result says so instead of "did not settle".
  load::LoadOptions o;
  o.port = shop.port;
  o.duration_s = 0.3;
  o.stability_max_s = 0.5;
  o.stability_window_s = 0.05;
  const auto result = load::run_load(profile, o);
  EXPECT_FALSE(result.stability_reached);
  EXPECT_EQ(result.stability_note.rfind("too few answers to judge", 0), 0u)
      << result.stability_note;
}

TEST(LoadDriver, RequestsCsvIsWellFormed) {
  const ScratchDir scratch("load");
  const fs::path& dir = scratch.path;
  RunningShop shop(dir, {});
  const auto profile = profile_of(R"({"think_time_ms": 2, "think_time_spread_ms": 1, "requests": [
      {"path": "/product?id={random:1:500}", "weight": 3},
      {"name": "search, by word", "path": "/search?q={iteration}"},
      {"name": "GET /product missing", "path": "/product?id=999999"}]})");
  load::LoadOptions o;
  o.port = shop.port;
  o.users = 2;
  o.duration_s = 0;
  o.requests_per_user = 25;
  const auto result = load::run_load(profile, o);
  const fs::path csv = dir / "requests.csv";
  load::write_requests_csv(csv.string(), result.requests);
  const auto lines = read_lines(csv);
  ASSERT_EQ(lines.size(), 51u);
  EXPECT_EQ(lines[0], "start_ns,end_ns,user,service,status,sent_ns");
  std::set<std::string> services;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string line = lines[i];
    // The one service name with a comma is quoted.
    const std::string quoted = "\"search, by word\"";
    if (line.find(quoted) != std::string::npos)
      line.replace(line.find(quoted), quoted.size(), "search by word");
    const auto f = split_csv(line);
    ASSERT_EQ(f.size(), 6u) << lines[i];
    const long long start = std::stoll(f[0]), end = std::stoll(f[1]);
    EXPECT_LE(start, end);
    EXPECT_EQ(f[5], f[0]) << "closed workload: sent when it starts";
    EXPECT_TRUE(f[2] == "0" || f[2] == "1");
    services.insert(f[3]);
    // An unknown product is the shop's 400, everything else 200.
    EXPECT_EQ(f[4], f[3] == "GET /product missing" ? "400" : "200") << lines[i];
  }
  EXPECT_TRUE(services.count("GET /product"));
}

TEST(LoadDriver, OpenWorkloadSendsThePoissonArrivals) {
  const ScratchDir scratch("load");
  const fs::path& dir = scratch.path;
  RunningShop shop(dir, {});
  const auto profile = profile_of(R"({"requests": [{"path": "/health"}]})");
  load::LoadOptions o;
  o.port = shop.port;
  o.users = 4;
  o.duration_s = 1;
  o.arrival_rate = 80;
  o.seed = 7;
  // The driver draws its arrival gaps from the same generator and seed.
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.arrival_rate);
  std::size_t expected = 0;
  for (double t = gap(rng); t < o.duration_s; t += gap(rng)) ++expected;
  const auto result = load::run_load(profile, o);
  EXPECT_EQ(result.requests.size(), expected) << result.first_error;
  EXPECT_EQ(load::count_errors(result.requests), 0u);
  // An arrival is sent once a connection is free: never before it arrives.
  for (const auto& r : result.requests) {
    EXPECT_LE(r.start_ns, r.sent_ns);
    EXPECT_LE(r.sent_ns, r.end_ns);
  }
}

TEST(LoadDriver, ConnectionErrorsAreRecordedWithStatusZero) {
  const int port = diagnose::engine::free_loopback_port();  // nothing listens there
  const auto profile = profile_of(R"({"requests": [{"path": "/"}]})");
  load::LoadOptions o;
  o.port = port;
  o.users = 2;
  o.duration_s = 0;
  o.requests_per_user = 3;
  const auto result = load::run_load(profile, o);
  ASSERT_EQ(result.requests.size(), 6u);
  EXPECT_EQ(load::count_errors(result.requests), 6u);
  for (const auto& r : result.requests) EXPECT_EQ(r.status, 0);
  EXPECT_NE(result.first_error.find("cannot connect: Connection refused"), std::string::npos)
      << result.first_error;
  EXPECT_NE(result.first_error.find(":" + std::to_string(port)), std::string::npos)
      << result.first_error;
}

TEST(LoadProfile, ErrorsNameTheKey) {
  auto profile_error = [](const std::string& text) {
    try {
      load::UsageProfile::parse(text);
    } catch (const load::ProfileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(
      profile_error(R"({"requests": [{"path": "/a", "wieght": 2}]})").find("requests[0].wieght"),
      std::string::npos);
  EXPECT_NE(profile_error(R"({"requests": [{"path": "/a", "method": "FETCH"}]})")
                .find("requests[0].method"),
            std::string::npos);
  EXPECT_NE(profile_error(R"({"requests": []})").find("'requests'"), std::string::npos);
  EXPECT_NE(profile_error(R"({"mode": "random", "requests": [{"path": "/a"}]})").find("'mode'"),
            std::string::npos);
  EXPECT_NE(profile_error(
                R"({"think_time_ms": 1, "think_time_spread_ms": 2, "requests": [{"path": "/a"}]})")
                .find("think_time_spread_ms"),
            std::string::npos);
  EXPECT_NE(profile_error("{not json").find("not valid JSON"), std::string::npos);
  // Found by fuzz_diagnose_inputs: a number too large for a double escaped
  // as nlohmann's out_of_range and ended the program.
  EXPECT_NE(
      profile_error(R"({"requests": [1)" + std::string(400, '5') + "]}").find("not valid JSON"),
      std::string::npos);
}

TEST(LoadProfile, PlaceholdersExpand) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(load::expand("/cart?user={user}&n={iteration}", 4, 9, rng), "/cart?user=4&n=9");
  for (int i = 0; i < 50; ++i) {
    const int v = std::stoi(load::expand("{random:3:5}", 0, 0, rng));
    EXPECT_GE(v, 3);
    EXPECT_LE(v, 5);
  }
  EXPECT_EQ(load::expand("{json}", 0, 0, rng), "{json}");
}

}  // namespace
}  // namespace sonde::test
