// ledger [options]: see --help and README.md.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "ledger.hpp"

namespace ledger {
namespace {

struct Flag {
  const char* name;
  bool Options::*member;
  const char* help;
};

const Flag kFlags[] = {
    {"--audit-lock", &Options::audit_lock,
     "POST /transfers re-verifies the audit chain (~3 ms of hashing) inside its global mutex"},
    {"--audit-lock-long", &Options::audit_lock_long,
     "as --audit-lock, but verifies the chain twice (~6 ms of hashing inside the mutex)"},
    {"--forecast-cpu", &Options::forecast_cpu,
     "GET /accounts/ID/forecast by Monte Carlo (8 ms of CPU) instead of the closed form; every "
     "request 0.5 ms of CPU more"},
    {"--statement-n-plus-one", &Options::statement_n_plus_one,
     "GET /accounts/ID/statement: one query per posting for its transfer and one for the "
     "counterparty (N+1)"},
    {"--search-scan", &Options::search_scan,
     "GET /transfers?invoice=N searches every memo as text (full scan) instead of the index"},
    {"--journal-scan", &Options::journal_scan,
     "the replay check reads the key out of each journal entry's JSON: a full scan of a table "
     "that grows by one row per request"},
    {"--checkpoint-pauses", &Options::checkpoint_pauses,
     "every --checkpoint-period-ms a checkpoint holds the state lock exclusively for ~300 ms"},
    {"--slow-fx", &Options::slow_fx,
     "GET /fx asks the external rate provider (--fx-delay-ms) on every request"},
    {"--split-writes", &Options::split_writes,
     "responses written as headers and body in two writes without TCP_NODELAY"},
    {"--bulk-events", &Options::bulk_events,
     "with --redis: every transfer also sends both accounts' whole statements to the archive"},
    {"--event-per-line", &Options::event_per_line,
     "with --redis: a statement reports each large movement to compliance in its own message"},
    {"--event-router", &Options::event_router,
     "with --redis: every event passes through one router component that forwards it"},
};

struct Value {
  const char* name;
  const char* help;
};

const Value kValues[] = {
    {"--port N", "port on 127.0.0.1 (0: any free port; default 8080)"},
    {"--postgres CONNINFO", "PostgreSQL (libpq connection string) instead of SQLite"},
    {"--data-dir DIR", "SQLite only: keep ledger.db in DIR (default: a temporary directory)"},
    {"--accounts N", "accounts seeded at start (default 2000)"},
    {"--transfers N", "transfers seeded at start (default 100000)"},
    {"--statement-size N", "postings per statement (default 50)"},
    {"--checkpoint-period-ms N", "time between checkpoints (default 2000)"},
    {"--checkpoint-rounds N", "hash rounds per checkpoint (default: ~300 ms, measured at start)"},
    {"--fx-delay-ms N", "the rate provider's latency (default 40)"},
    {"--redis HOST:PORT",
     "the event bus: transfers and statements send events through this Redis (README.md)"},
    {"--event-handling-us N", "each event consumer's downstream round trip (default 1000)"},
    {"--archive-kbps N", "the archive's link in kilobytes per second (default 2000)"},
    {"--queue-capacity N", "messages an event queue holds before senders wait (default 128)"},
    {"--pid-file PATH", "write the process id there once listening; removed at exit"},
};

void usage(std::ostream& out) {
  out << "usage: ledger [options]\n\n"
         "A banking ledger over HTTP/1.1 (thread per connection), SQLite or PostgreSQL.\n\n";
  for (const Value& v : kValues) out << "  " << v.name << "\n      " << v.help << "\n";
  out << "\nPlanted problems (off by default):\n";
  for (const Flag& f : kFlags) out << "  " << f.name << "\n      " << f.help << "\n";
  out << "  --help\n";
}

bool parse_int(const std::string& text, int minimum, int& out) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  out = std::stoi(text);
  return out >= minimum;
}

// Exit status 1 with a message on any bad option; 0 after --help.
int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(std::cout);
      return 0;
    }
    bool matched = false;
    for (const Flag& f : kFlags)
      if (arg == f.name) {
        o.*(f.member) = true;
        matched = true;
      }
    if (matched) continue;
    struct IntOption {
      const char* name;
      int* target;
      int minimum;
    };
    const IntOption ints[] = {{"--port", &o.port, 0},
                              {"--accounts", &o.accounts, 2},
                              {"--transfers", &o.transfers, 1},
                              {"--statement-size", &o.statement_size, 1},
                              {"--checkpoint-period-ms", &o.checkpoint_period_ms, 1},
                              {"--checkpoint-rounds", &o.checkpoint_rounds, 1},
                              {"--fx-delay-ms", &o.fx_delay_ms, 0},
                              {"--event-handling-us", &o.event_handling_us, 0},
                              {"--archive-kbps", &o.archive_kbps, 1},
                              {"--queue-capacity", &o.queue_capacity, 1}};
    const struct {
      const char* name;
      std::string* target;
    } strings[] = {{"--postgres", &o.postgres},
                   {"--data-dir", &o.data_dir},
                   {"--pid-file", &o.pid_file},
                   {"--redis", &o.redis}};
    for (const IntOption& n : ints)
      if (arg == n.name) {
        if (i + 1 >= argc || !parse_int(argv[i + 1], n.minimum, *n.target)) {
          std::cerr << "ledger: " << arg << " needs an integer >= " << n.minimum << "\n";
          return 1;
        }
        ++i;
        matched = true;
      }
    for (const auto& s : strings)
      if (arg == s.name) {
        if (i + 1 >= argc || std::string(argv[i + 1]).empty()) {
          std::cerr << "ledger: " << arg << " needs a value\n";
          return 1;
        }
        *s.target = argv[++i];
        matched = true;
      }
    if (!matched) {
      std::cerr << "ledger: unknown option '" << arg << "' (--help lists them)\n";
      return 1;
    }
  }
  if (o.port > 65535) {
    std::cerr << "ledger: --port must be 0..65535\n";
    return 1;
  }
  if (o.redis.empty() && (o.bulk_events || o.event_per_line || o.event_router)) {
    std::cerr << "ledger: --bulk-events, --event-per-line and --event-router need --redis\n";
    return 1;
  }
  if (o.queue_capacity > 100000) {
    std::cerr << "ledger: --queue-capacity must be at most 100000\n";
    return 1;
  }
  if (!o.postgres.empty() && !o.data_dir.empty()) {
    std::cerr << "ledger: --data-dir is for SQLite; not with --postgres\n";
    return 1;
  }
  return -1;
}

void on_stop_signal(int) { HttpServer::request_stop(); }

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
    Ledger ledger(o);
    HttpServer server(ledger, o.port, o.split_writes);
    ledger.start();
    std::cout << "ledger: listening on 127.0.0.1:" << server.port() << std::endl;
    if (!o.pid_file.empty()) std::ofstream(o.pid_file) << ::getpid() << "\n";
    server.run();
    ledger.stop();
    if (!o.pid_file.empty()) std::remove(o.pid_file.c_str());
  } catch (const std::exception& e) {
    std::cerr << "ledger: " << e.what() << "\n";
    return 1;
  }
  std::cout << "ledger: stopped" << std::endl;
  return 0;
}

}  // namespace
}  // namespace ledger

int main(int argc, char** argv) { return ledger::run(argc, argv); }
