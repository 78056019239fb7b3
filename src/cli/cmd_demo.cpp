// `sonde demo [--quick] [--out DIR]`: the diagnosis story end to end on
// embedded defaults. Starts the demo shop (examples/shop) with a set of
// injected antipatterns under monitoring, drives load in a single-user test
// and a scaling series, diagnoses the result and writes DIR/report.html.
// Everything it runs is written to DIR/config.json and DIR/profile.json, so
// `sonde diagnose --config DIR/config.json` repeats it.
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/diagnose_run.hpp"
#include "diagnose/engine/cpu_list.hpp"

namespace sonde::cli {
namespace {

namespace fs = std::filesystem;

struct DemoOptions {
  std::string out = "sonde-demo";
  std::string shop;
  std::vector<std::string> problems = {"one-lane-bridge", "stifle", "expensive-query"};
  bool quick = false;
  double arrival_rate_per_user = 0;  // 0: closed workload
  std::string database = "sqlite";   // or postgresql: a throw-away server the engine starts
  bool share_cpus = false;           // postgresql: do not split the CPUs between shop and server
  std::string messaging = "queues";  // or redis: a throw-away broker the engine starts
  double requirement_ms = 10;        // every service's P90 must stay at or below this
};

// With a database server: the lower half of this process' CPUs for the
// shop, the upper half for the server, as if each had its own machine
// (sharing, each slows the other and the server's CPU limit means
// little). Empty when there are fewer than 2.
std::pair<std::vector<int>, std::vector<int>> split_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.size() < 2) return {};
  const auto half = cpus.begin() + static_cast<std::ptrdiff_t>(cpus.size() / 2);
  return {std::vector<int>(cpus.begin(), half), std::vector<int>(half, cpus.end())};
}

// The shop's requests (examples/shop/profile.json, embedded so an installed
// sonde needs no source tree).
const char* const kProfile = R"({
  "mode": "mix", "think_time_ms": 5, "think_time_spread_ms": 5,
  "requests": [
    {"name": "GET /product", "path": "/product?id={random:1:2000}", "weight": 5},
    {"name": "GET /search", "path": "/search?q={random:1:99}", "weight": 2},
    {"name": "POST /cart", "method": "POST", "path": "/cart?user={user}&product={random:1:2000}", "weight": 2},
    {"name": "POST /order", "method": "POST", "path": "/order?user={user}", "weight": 1},
    {"name": "GET /orders", "path": "/orders?user={user}", "weight": 1},
    {"name": "GET /shipping", "path": "/shipping?product={random:1:2000}", "weight": 1},
    {"name": "GET /recommend", "path": "/recommend?product={random:1:2000}", "weight": 1}
  ]
})";

std::string find_shop(const std::string& given) {
  if (!given.empty()) return given;
  for (const fs::path& p :
       {fs::path(SONDE_SHOP_BINARY), fs::path(SONDE_INSTALL_LIBEXECDIR) / "sonde" / "shop"})
    if (fs::exists(p)) return p.string();
  return "";
}

int run_demo(const DemoOptions& o) {
  const std::string shop = find_shop(o.shop);
  if (shop.empty() || !fs::exists(shop)) {
    std::cerr << "sonde demo: the demo shop is not built (cmake --build build/release --target "
                 "shop), or give --shop PATH\n";
    return 1;
  }
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) {
    std::cerr << "sonde demo: cannot create '" << o.out << "': " << ec.message() << "\n";
    return 1;
  }
  const fs::path out = fs::absolute(o.out);
  std::ofstream(out / "profile.json") << kProfile;
  nlohmann::json command = {shop, "--port", "{port}"};
  for (const auto& p : o.problems)
    if (p != "none") command.push_back("--" + p);
  if (o.database == "postgresql") {
    command.push_back("--postgres");
    command.push_back("{database}");
  }
  if (o.messaging == "redis") {
    command.push_back("--redis");
    command.push_back("{broker}");
  }
  const double stable = o.quick ? 3 : 10;
  nlohmann::json config = {
      {"sut",
       {{"command", command},
        {"sonde", (fs::canonical("/proc/self/exe")).string()},
        {"reload_ms", 100}}},
      {"profile", (out / "profile.json").string()},
      {"max_users", o.quick ? 6 : 12},
      {"scaling_steps", o.quick ? 3 : 5},
      {"arrival_rate_per_user", o.arrival_rate_per_user},
      {"samplers", {"cpu"}},
      {"durations",
       {{"ramp_up_s", o.quick ? 0.5 : 2.0},
        {"stable_s", stable},
        {"cool_down_s", 0.5},
        // Quick: a shorter bound on the stability wait (default 10 s).
        {"stability_max_s", o.quick ? 3.0 : 10.0}}},
      {"requirements", {{"default", {{"threshold_ms", o.requirement_ms}, {"percentile", 0.9}}}}}};
  // No "experiments": the systematic search runs each level's experiments
  // (and the probes they need) once it gets there.
  std::string placement;
  if (o.database == "postgresql") {
    config["database"] = {{"kind", "postgresql"}, {"start", true}};
    const auto [shop_cpus, server_cpus] = split_cpus();
    if (!o.share_cpus && !shop_cpus.empty()) {
      namespace engine = diagnose::engine;
      config["sut"]["cpus"] = engine::cpu_list_text(shop_cpus);
      config["database"]["cpus"] = engine::cpu_list_text(server_cpus);
      placement = " (shop on CPUs " + engine::cpu_list_text(shop_cpus) + ", server on " +
                  engine::cpu_list_text(server_cpus) + ")";
    }
  }
  if (o.messaging == "redis") {
    config["broker"] = {{"kind", "redis"}, {"start", true}, {"queues", "shop:queue:*"}};
    // The servers' machine, when there is one.
    if (config.contains("database") && config["database"].contains("cpus"))
      config["broker"]["cpus"] = config["database"]["cpus"];
  }
  std::ofstream(out / "config.json") << config.dump(2) << "\n";
  std::string flags;
  for (const std::string& p : o.problems) flags += " --" + p;
  std::cerr << "sonde demo: shop" << flags << " on " << o.database << placement
            << ", messages through " << o.messaging << "; config in "
            << (out / "config.json").string() << "\n";
  return diagnose_with_config((out / "config.json").string(), out.string(), "");
}

}  // namespace

SONDE_COMMAND(
    "demo", "Diagnose the demo shop with injected performance problems, end to end",
    [](CLI::App& app, int& exit_code) {
      auto o = std::make_shared<DemoOptions>();
      app.add_flag("--quick", o->quick, "Short experiments (about a minute)");
      app.add_option("--arrival-rate-per-user", o->arrival_rate_per_user,
                     "Open workload: requests arrive at this rate per user and second (Poisson), "
                     "instead of users that wait and think (default 0: closed)")
          ->check(CLI::NonNegativeNumber);
      app.add_option("--database", o->database,
                     "The shop's database: sqlite (embedded, default) or postgresql (a throw-away "
                     "PostgreSQL server on 127.0.0.1, started and stopped by the run and sampled "
                     "in every measured phase)")
          ->check(CLI::IsMember({"sqlite", "postgresql"}));
      app.add_option("--messaging", o->messaging,
                     "How the shop's components exchange messages: queues (in-process, default) "
                     "or redis (lists in a throw-away Redis server on 127.0.0.1, started and "
                     "stopped by the run and sampled in every measured phase)")
          ->check(CLI::IsMember({"queues", "redis"}));
      app.add_flag("--share-cpus", o->share_cpus,
                   "With postgresql: shop and server share every CPU (default: the shop gets the "
                   "lower half of the CPUs, the server the upper half, like separate machines)");
      app.add_option("--requirement-ms", o->requirement_ms,
                     "Every service's requirement: its 90th percentile at or below this many "
                     "milliseconds (default 10)")
          ->check(CLI::PositiveNumber);
      app.add_option("--out", o->out, "Directory for the report and the data (default sonde-demo)");
      app.add_option("--shop", o->shop, "The demo shop binary (default: the one built with sonde)");
      app.add_option("--problems", o->problems,
                     "Antipatterns to switch on (shop flags without '--', or none; default: "
                     "one-lane-bridge stifle expensive-query)")
          ->check(CLI::IsMember({"none",
                                 "one-lane-bridge",
                                 "db-lock",
                                 "stifle",
                                 "expensive-query",
                                 "ramp",
                                 "hiccups",
                                 "cpu-heavy",
                                 "slow-external",
                                 "excessive-messaging",
                                 "blob",
                                 "empty-semi-trucks",
                                 "outliers",
                                 "rising-hiccups",
                                 "blurred-hiccups",
                                 "varying-external",
                                 "stifle-similar",
                                 "blurred-blob",
                                 "blurred-sync",
                                 "moderate-cpu",
                                 "cascading-loop",
                                 "many-queries",
                                 "split-writes",
                                 "db-lock-long",
                                 "stifle-prices"}));
      app.footer("Exit status: 0 ok, 3 the run was incomplete, 1 error, 2 usage error.");
      app.callback([o, &exit_code] { exit_code = run_demo(*o); });
    });

}  // namespace sonde::cli
