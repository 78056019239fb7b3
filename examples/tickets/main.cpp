// tickets [options]: see --help and README.md.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <utility>

#include "tickets.hpp"

namespace tickets {
namespace {

struct Problem {
  const char* name;
  bool Options::*member;
  const char* help;
};

const Problem kProblems[] = {
    {"--refresh-pauses", &Options::refresh_pauses,
     "the event cache is rebuilt in place under its exclusive lock every --refresh-period-ms "
     "(~300 ms), so every request that reads it waits"},
    {"--unpruned-holds", &Options::unpruned_holds,
     "every order leaves a hold per seat in a list nothing prunes; the seat listing checks each "
     "free seat against the whole list"},
    {"--slow-fraud-check", &Options::slow_fraud_check,
     "POST /orders asks the external fraud screening (--fraud-delay-ms) before it books"},
    {"--price-simulation", &Options::price_simulation,
     "GET /price simulates --price-paths demand paths instead of the closed form"},
    {"--allocation-lock", &Options::allocation_lock,
     "every order, from reading the free seats through the payment authorization to its commit, "
     "holds one process-wide lock"},
    {"--seat-n-plus-one", &Options::seat_n_plus_one,
     "GET /events/ID/seats reads each free seat and its section's tier with queries of their own"},
    {"--review-scan", &Options::review_scan,
     "GET /search matches every review's text (LIKE '%word%') instead of the full-text index"},
    {"--write-coalescing", &Options::write_coalescing,
     "the event loop writes answers only on the ticks of a --flush-interval-ms timer"},
};

struct Number {
  const char* name;
  int Options::*member;
  int minimum;
  int maximum;
  const char* help;
};

const Number kNumbers[] = {
    {"--port", &Options::port, 0, 65535, "port on 127.0.0.1 (0: any free port; default 8080)"},
    {"--workers", &Options::workers, 1, 1024, "worker threads that run the handlers (default 16)"},
    {"--events", &Options::events, 1, 100000, "events seeded at start (default 400)"},
    {"--seats-per-event", &Options::seats_per_event, 20, 100000,
     "seats of every event (default 600)"},
    {"--seeded-orders", &Options::seeded_orders, 0, 10000000,
     "orders seeded at start (default 8000)"},
    {"--reviews", &Options::reviews, 0, 10000000, "reviews seeded at start (default 60000)"},
    {"--refresh-period-ms", &Options::refresh_period_ms, 1, 3600000,
     "time between cache refreshes (default 2000)"},
    {"--refresh-rounds", &Options::refresh_rounds, 1, 1000000000,
     "hash rounds per event and refresh (default: ~300 ms in all, measured at start)"},
    {"--search-rounds", &Options::search_rounds, 1, 1000000,
     "best-seats scoring passes per order (default 40)"},
    {"--price-paths", &Options::price_paths, 1, 10000000,
     "--price-simulation's demand paths (default 20000)"},
    {"--fraud-delay-ms", &Options::fraud_delay_ms, 0, 60000,
     "the fraud screening's latency (default 40)"},
    {"--payment-delay-ms", &Options::payment_delay_ms, 0, 60000,
     "the payment authorizer's latency, every order (default 4)"},
    {"--flush-interval-ms", &Options::flush_interval_ms, 1, 10000,
     "--write-coalescing's timer period (default 20)"},
};

void usage(std::ostream& out) {
  out << "usage: tickets [options]\n\n"
         "A concert ticket office over HTTP/1.1: one epoll event loop, a pool of worker threads,\n"
         "embedded SQLite.\n\n";
  for (const Number& n : kNumbers) out << "  " << n.name << " N\n      " << n.help << "\n";
  out << "  --data-dir DIR\n      keep tickets.db in DIR (default: a temporary folder, removed at "
         "exit)\n"
         "  --pid-file PATH\n      write the process id there once listening; removed at exit\n"
         "\nPlanted problems (off by default):\n";
  for (const Problem& p : kProblems) out << "  " << p.name << "\n      " << p.help << "\n";
  out << "  --help\n";
}

bool parse_number(const std::string& text, long long& out) {
  if (text.empty() || text.size() > 10) return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// -1: go on; otherwise the exit status (0 after --help, 1 on a bad option).
int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(std::cout);
      return 0;
    }
    bool known = false;
    for (const Problem& p : kProblems)
      if (arg == p.name) {
        o.*(p.member) = true;
        known = true;
      }
    for (const Number& n : kNumbers) {
      if (arg != n.name) continue;
      long long value = 0;
      if (i + 1 >= argc || !parse_number(argv[i + 1], value) || value < n.minimum ||
          value > n.maximum) {
        std::cerr << "tickets: " << arg << " needs a number from " << n.minimum << " to "
                  << n.maximum << "\n";
        return 1;
      }
      o.*(n.member) = static_cast<int>(value);
      ++i;
      known = true;
    }
    for (auto [name, target] :
         {std::pair{"--data-dir", &o.data_dir}, std::pair{"--pid-file", &o.pid_file}}) {
      if (arg != name) continue;
      if (i + 1 >= argc || std::string(argv[i + 1]).empty()) {
        std::cerr << "tickets: " << arg << " needs a value\n";
        return 1;
      }
      *target = argv[++i];
      known = true;
    }
    if (!known) {
      std::cerr << "tickets: unknown option '" << arg << "' (--help lists them)\n";
      return 1;
    }
  }
  return -1;
}

void on_stop_signal(int) { EventLoop::request_stop(); }

int run(int argc, char** argv) {
  Options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    Catalog catalog(o);
    BoxOffice office(o, catalog);
    EventLoop loop(o.port, o.write_coalescing, o.flush_interval_ms);
    office.start();
    {
      WorkerPool pool(o.workers, [&](Job& job) {
        try {
          const Response r = handle_request(office, job.request);
          loop.complete(job.connection, http_bytes(r, job.request.keep_alive));
        } catch (...) {
          loop.complete(job.connection, std::string());  // no answer possible: the loop closes it
          throw;
        }
      });
      std::cout << "tickets: listening on 127.0.0.1:" << loop.port() << std::endl;
      if (!o.pid_file.empty()) std::ofstream(o.pid_file) << ::getpid() << "\n";
      loop.run(pool);
    }  // the workers finish what they hold and end
    office.stop();
    if (!o.pid_file.empty()) std::remove(o.pid_file.c_str());
  } catch (const std::exception& e) {
    std::cerr << "tickets: " << e.what() << "\n";
    if (!o.pid_file.empty()) std::remove(o.pid_file.c_str());
    return 1;
  }
  std::cout << "tickets: stopped" << std::endl;
  return 0;
}

}  // namespace
}  // namespace tickets

int main(int argc, char** argv) { return tickets::run(argc, argv); }
