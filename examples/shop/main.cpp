// examples/shop: the demo system under test for `sonde diagnose`.
//   shop [--port N] [--one-lane-bridge] [--stifle] ...   (see README.md)
// Prints "shop: listening on 127.0.0.1:PORT" once it accepts requests;
// SIGINT/SIGTERM stop it cleanly.
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "shop.hpp"

namespace shop {
namespace {

struct Flag {
  const char* name;
  bool Options::*member;
  const char* help;
};

const Flag kFlags[] = {
    {"--one-lane-bridge", &Options::one_lane_bridge,
     "every request holds one global lock, with a 3 ms step inside"},
    {"--db-lock", &Options::db_lock, "POST /cart holds the database write lock while it works"},
    {"--stifle", &Options::stifle, "GET /orders issues one query per order and per line (N+1)"},
    {"--expensive-query", &Options::expensive_query,
     "GET /search scans and sorts the whole catalogue"},
    {"--ramp", &Options::ramp, "GET /product and POST /cart scan a list that grows per request"},
    {"--hiccups", &Options::hiccups, "a periodic stop-the-world pause stalls every request"},
    {"--cpu-heavy", &Options::cpu_heavy,
     "every page takes 0.5 ms of CPU, GET /recommend 6 ms more (thread CPU time)"},
    {"--slow-external", &Options::slow_external, "GET /shipping waits for a slow external carrier"},
    {"--excessive-messaging", &Options::excessive_messaging,
     "POST /order sends 60 large notifications"},
    {"--blob", &Options::blob, "every message passes through one hub component"},
    {"--empty-semi-trucks", &Options::empty_semi_trucks,
     "POST /order sends one tiny message per unit"},
    {"--outliers", &Options::outliers, "1% of requests pause 40 ms (no problem at P90)"},
    {"--rising-hiccups", &Options::rising_hiccups,
     "hiccups that build up in ten growing slices instead of one pause"},
    {"--blurred-hiccups", &Options::blurred_hiccups,
     "hiccups of random length (1/3 to 5/3) at random intervals (1/2 to 3/2)"},
    {"--varying-external", &Options::varying_external,
     "GET /shipping waits for a carrier whose delay varies from 5 to 2x-5 ms"},
    {"--stifle-similar", &Options::stifle_similar,
     "--stifle with the keys in the statement text (similar, not equal, statements)"},
    {"--blurred-blob", &Options::blurred_blob,
     "--blob, but inventory also tells notification directly (peer to peer)"},
    {"--blurred-sync", &Options::blurred_sync,
     "only GET /product and POST /cart cross the one-lane bridge"},
    {"--many-queries", &Options::many_queries,
     "GET /product also runs 12 different statements over ~1000 rows each"},
    {"--cascading-loop", &Options::cascading_loop,
     "--empty-semi-trucks' loop, with the send two helper calls below it"},
    {"--moderate-cpu", &Options::moderate_cpu,
     "every request takes 2 ms of CPU (harmless alone, a queue at load)"},
    {"--db-lock-long", &Options::db_lock_long,
     "--db-lock with a 4 ms step under the lock instead of 2 ms"},
    {"--stifle-prices", &Options::stifle_prices,
     "--stifle, and GET /orders also reads each line's price by one statement per line"},
    {"--split-writes", &Options::split_writes,
     "responses written as headers and body in two writes without TCP_NODELAY (Nagle + "
     "delayed ACK: ~40 ms per request, outside the handler)"},
};

struct IntFlag {
  const char* name;
  int Options::*member;
  int min;
  const char* help;
};

const IntFlag kIntFlags[] = {
    {"--port", &Options::port, 0, "port on 127.0.0.1 (0: any free port, printed)"},
    {"--threads", &Options::threads, 1, "HTTP worker threads (default 32)"},
    {"--products", &Options::products, 10, "catalogue rows (default 20000)"},
    {"--hiccup-period-ms", &Options::hiccup_period_ms, 1, "time between pauses (default 2000)"},
    {"--hiccup-pause-ms", &Options::hiccup_pause_ms, 1, "length of a pause (default 300)"},
    {"--external-delay-ms", &Options::external_delay_ms, 0, "carrier delay (default 40)"},
    {"--ramp-growth", &Options::ramp_growth, 1,
     "--ramp: history entries each request adds (default 16)"},
};

}  // namespace

std::string usage() {
  std::string text = "usage: shop [options]\n";
  for (const auto& f : kIntFlags) text += std::string("  ") + f.name + " N\t" + f.help + "\n";
  text += "  --data-dir DIR\tdirectory for shop.db (default: a fresh temporary one)\n";
  text +=
      "  --postgres CONNINFO\tuse this PostgreSQL database instead of SQLite (libpq "
      "connection string; its shop tables are recreated)\n";
  text +=
      "  --redis HOST:PORT\tsend the components' messages through this Redis (lists "
      "shop:queue:*) instead of in-process queues\n";
  text +=
      "  --pid-file PATH\twrite the process id there once listening (removed at a clean exit)\n";
  for (const auto& f : kFlags) text += std::string("  ") + f.name + "\t" + f.help + "\n";
  return text;
}

bool parse_options(int argc, char** argv, Options& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    bool known = false;
    for (const auto& f : kFlags)
      if (arg == f.name) options.*f.member = known = true;
    for (const auto& f : kIntFlags) {
      if (arg != f.name) continue;
      known = true;
      if (i + 1 >= argc) return error = arg + " needs a value", false;
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || end == argv[i] || value < f.min || value > 1000000)
        return error = arg + ": invalid value '" + argv[i] + "'", false;
      options.*f.member = static_cast<int>(value);
    }
    for (auto [name, member] : {std::pair{"--data-dir", &Options::data_dir},
                                {"--pid-file", &Options::pid_file},
                                {"--postgres", &Options::postgres},
                                {"--redis", &Options::redis}}) {
      if (arg != name) continue;
      known = true;
      if (i + 1 >= argc) return error = arg + " needs a value", false;
      options.*member = argv[++i];
    }
    if (!known) return error = "unknown option '" + arg + "'", false;
  }
  if (!options.data_dir.empty() && !options.postgres.empty())
    return error = "--data-dir is where SQLite's file goes; not with --postgres", false;
  return true;
}

namespace {

volatile std::sig_atomic_t g_stop_requested = 0;
// Not instrumented: a probe must not run inside a signal handler.
__attribute__((no_instrument_function)) void request_stop(int) { g_stop_requested = 1; }

int int_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) throw std::invalid_argument(std::string("missing parameter ") + name);
  const std::string text = req.get_param_value(name);
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    throw std::invalid_argument(std::string("bad parameter ") + name);
  return static_cast<int>(value);
}

// Every endpoint: runs inside the world lock (see --hiccups) and, with
// --one-lane-bridge, the bridge lock; a bad
// parameter answers 400, anything else that fails 500.
void serve(httplib::Server& server, Shop& shop, const char* method, const char* path,
           std::function<std::string(const httplib::Request&)> handler) {
  auto wrapped = [&shop, handler](const httplib::Request& req, httplib::Response& res) {
    try {
      std::shared_lock world(shop.world());
      shop.request_extras();  // outside the bridge: the extras are not the sync point's
      std::unique_lock bridge = shop.cross_bridge(req.path);
      res.set_content(handler(req), "application/json");
    } catch (const std::invalid_argument& e) {
      res.status = 400;
      res.set_content(e.what(), "text/plain");
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(e.what(), "text/plain");
    }
  };
  if (std::string(method) == "GET")
    server.Get(path, wrapped);
  else
    server.Post(path, wrapped);
}

int run(const Options& options) {
  namespace fs = std::filesystem;
  // SQLite's file (PostgreSQL needs no directory of the shop's).
  std::string dir = options.data_dir;
  bool remove_dir = false;
  std::string db_path;
  if (options.postgres.empty()) {
    if (dir.empty()) {
      std::string pattern = (fs::temp_directory_path() / "shop-XXXXXX").string();
      if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
      dir = pattern;
      remove_dir = true;
    }
    fs::create_directories(dir);
    db_path = (fs::path(dir) / "shop.db").string();
    fs::remove(db_path);
    fs::remove(db_path + "-wal");
    fs::remove(db_path + "-shm");
  }
  int status = 0;
  {
    std::unique_ptr<Database> db =
        options.postgres.empty() ? open_sqlite(db_path) : open_postgres(options.postgres);
    // Stop signals are handled from here on (main installed the handler);
    // a test that stops the shop while it starts waits for this line.
    std::fprintf(stderr, "shop: seeding %d products\n", options.products);
    db->seed(options.products);
    MessageBus bus(options.redis);
    Shop shop(options, *db, bus);

    httplib::Server server;
    server.new_task_queue = [&options] { return new httplib::ThreadPool(options.threads); };
    server.set_keep_alive_max_count(1000000);
    // Headers and body go out in separate writes (cpp-httplib writes the
    // headers, then the body); without TCP_NODELAY Nagle holds the body
    // until the client's delayed ACK (~40 ms per request): --split-writes.
    server.set_tcp_nodelay(!options.split_writes);
    serve(server, shop, "GET", "/health", [](const auto&) { return std::string("{\"ok\":true}"); });
    serve(server, shop, "GET", "/stats", [&](const auto&) { return shop.stats(); });
    serve(server, shop, "GET", "/product",
          [&](const auto& r) { return shop.product(int_param(r, "id")); });
    serve(server, shop, "GET", "/search", [&](const auto& r) {
      return shop.search(r.has_param("q") ? r.get_param_value("q") : std::string());
    });
    serve(server, shop, "POST", "/cart", [&](const auto& r) {
      return shop.add_to_cart(int_param(r, "user"), int_param(r, "product"),
                              r.has_param("quantity") ? int_param(r, "quantity") : 1);
    });
    serve(server, shop, "POST", "/order",
          [&](const auto& r) { return shop.place_order(int_param(r, "user")); });
    serve(server, shop, "GET", "/orders",
          [&](const auto& r) { return shop.order_history(int_param(r, "user")); });
    serve(server, shop, "GET", "/shipping",
          [&](const auto& r) { return shop.shipping_quote(int_param(r, "product")); });
    serve(server, shop, "GET", "/recommend",
          [&](const auto& r) { return shop.recommend(int_param(r, "product")); });

    int port = options.port;
    if (port == 0) {
      port = server.bind_to_any_port("127.0.0.1");
    } else if (!server.bind_to_port("127.0.0.1", port)) {
      port = -1;
    }
    if (port < 0) {
      std::cerr << "shop: cannot listen on 127.0.0.1:" << options.port << "\n";
      status = 1;
    } else {
      // SIGINT/SIGTERM set a flag (a handler, not sigwait: threads the
      // program did not create, such as libsonde's writer, may take the
      // signal); this thread turns it into a clean server stop.
      std::atomic<bool> listening{true};
      // A stop asked before the server runs is repeated until it takes:
      // httplib's stop() does nothing until listen_after_bind has started.
      std::thread stopper([&server, &listening] {
        while (listening && !g_stop_requested)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        while (listening) {
          server.stop();
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      });
      // The pid file lets a test or a supervisor find this process even
      // when it runs under a wrapper (sonde run).
      if (!options.pid_file.empty()) std::ofstream(options.pid_file) << getpid() << "\n";
      std::printf("shop: listening on 127.0.0.1:%d\n", port);
      std::fflush(stdout);
      if (!g_stop_requested) server.listen_after_bind();
      listening = false;
      stopper.join();
      if (!options.pid_file.empty()) fs::remove(options.pid_file);
    }
    bus.stop();
  }
  if (remove_dir) fs::remove_all(dir);
  return status;
}

}  // namespace
}  // namespace shop

int main(int argc, char** argv) {
  shop::Options options;
  std::string error;
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout << shop::usage();
    return 0;
  }
  if (!shop::parse_options(argc, argv, options, error)) {
    std::cerr << "shop: " << error << "\n" << shop::usage();
    return 2;
  }
  struct sigaction stop {};
  stop.sa_handler = shop::request_stop;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);
  try {
    return shop::run(options);
  } catch (const std::exception& e) {
    std::cerr << "shop: " << e.what() << "\n";
    return 1;
  }
}
