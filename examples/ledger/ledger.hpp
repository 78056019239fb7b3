// ledger: a small banking service over HTTP/1.1 on raw POSIX sockets, one
// thread per keep-alive connection, SQLite (embedded) or PostgreSQL (libpq).
// The second system under test of `sonde diagnose` (examples/ledger/README.md):
// each planted problem is switched on by a flag. Everything is in namespace
// ledger, built with -finstrument-functions and not linked with libsonde.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ledger {

struct Options {
  int port = 8080;
  std::string postgres;  // libpq connection string; empty: SQLite
  std::string data_dir;  // SQLite only; empty: a fresh temporary directory
  int accounts = 2000;
  int transfers = 100000;
  int statement_size = 50;  // postings per statement
  std::string pid_file;
  // Planted problems (README.md).
  bool audit_lock = false;            // One Lane Bridge / Dispensable Synchronization
  bool audit_lock_long = false;       // the same, the chain verified twice (scenario l07)
  bool forecast_cpu = false;          // CPU-heavy endpoint (Traffic Jam)
  bool statement_n_plus_one = false;  // The Stifle
  bool search_scan = false;           // Expensive Database Call
  bool journal_scan = false;          // The Ramp
  bool checkpoint_pauses = false;     // Application Hiccups
  bool slow_fx = false;               // slow external call
  bool split_writes = false;          // Nagle + delayed ACK
  int checkpoint_period_ms = 2000;
  int checkpoint_rounds = 0;  // 0: calibrated at start to about 300 ms
  int fx_delay_ms = 40;
  // The event bus (events.cpp): off without --redis.
  std::string redis;             // HOST:PORT of the Redis the components talk through
  int event_handling_us = 1000;  // each consumer's downstream round trip per message
  int archive_kbps = 2000;       // the archive's link, kilobytes per second
  int queue_capacity = 128;      // messages a queue holds before senders wait
  bool bulk_events = false;      // Excessive Messaging (bulk data through the broker)
  bool event_per_line = false;   // Empty Semi Trucks (one message per statement line)
  bool event_router = false;     // The Blob (every event through one router)
};

// A database failure: the request answers 500 with the message.
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An event could not be published (the broker is unreachable, or the
// queue stayed full): the request answers 503 with the message.
struct EventError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Row = std::vector<std::string>;
using Rows = std::vector<Row>;

// One database connection. Statements are written with '?' parameters;
// values travel as text. One Store per connection thread.
class Store {
 public:
  virtual ~Store() = default;
  virtual Rows query(const std::string& sql, const std::vector<std::string>& params) = 0;
  virtual void exec(const std::string& sql) = 0;  // no parameters, no rows
  virtual bool is_postgres() const = 0;
  // BEGIN for a writing transaction (SQLite: IMMEDIATE, so that a
  // transaction that reads first does not fail to upgrade its lock).
  virtual void begin_write() = 0;
};

// SQLite: the database file; its schema is created and seeded by
// prepare_sqlite, then every thread opens its own connection.
std::string prepare_sqlite(const Options& o, std::string& temp_dir);
std::unique_ptr<Store> open_sqlite(const std::string& file);
// PostgreSQL: throws StoreError "cannot connect to PostgreSQL (...)".
void prepare_postgres(const Options& o);
std::unique_ptr<Store> open_postgres(const std::string& conninfo);

// HTTP as the server sees it.
struct Request {
  std::string method;
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // query string and form body
  std::string body;
  uint64_t connection = 0;  // the connection's number
  uint64_t sequence = 0;    // the request's number on its connection
};

struct Response {
  int status = 200;
  std::string body;  // JSON
};

// The application (handlers.cpp).
class Ledger {
 public:
  explicit Ledger(const Options& o);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;
  void start();  // background threads (FX refresher, checkpoints)
  void stop();
  Response handle(const Request& r);  // one request, on its connection's thread

  struct Impl;  // handlers.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

// The external FX rate provider, simulated in-process on its own loopback
// port and threads (fx_provider.cpp): answers after a fixed delay.
class FxProvider {
 public:
  explicit FxProvider(int delay_ms);
  ~FxProvider();
  FxProvider(const FxProvider&) = delete;
  FxProvider& operator=(const FxProvider&) = delete;
  int port() const { return port_; }

 private:
  void serve();
  int delay_ms_;
  int listen_fd_ = -1;
  int port_ = 0;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<int> open_ = 0;
  std::atomic<bool> stopping_ = false;
  void* thread_ = nullptr;  // std::thread, kept out of the header
};
// One quote from the provider: the rate of from→to, or throws StoreError.
double fetch_fx_rate(int port, const std::string& from, const std::string& to);
// The whole rate table ("EUR>USD" → rate) in one request.
std::map<std::string, double> fetch_fx_table(int port);

// The event bus (events.cpp): the ledger's components talk through Redis
// lists, one per consuming component, each bounded by credits (a sender
// takes one before it pushes; the consumer gives it back once it handled
// the message), so a slow consumer makes its senders wait. Each consumer is
// a thread of this process with its own connection.
class Events {
 public:
  // Connects (throws EventError "cannot connect to Redis at HOST:PORT: ..."),
  // empties the queues an earlier run left and grants the credits.
  explicit Events(const Options& o);
  ~Events();  // stop()
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  void start();  // the consumer threads
  void stop();
  // `sender` (a component name) sends `payload` to the component `to`,
  // waiting for a credit of its queue (at most 2 s; then EventError). With
  // --event-router the message goes to the router, which forwards it.
  // Reported to sonde's messaging probe as "sender>receiver".
  void publish(const char* sender, const std::string& to, const std::string& payload);

  struct Impl;  // events.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

// The HTTP server (http_server.cpp): listens on 127.0.0.1:port, one thread
// per accepted connection, until request_stop().
class HttpServer {
 public:
  HttpServer(Ledger& ledger, int port, bool split_writes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  int port() const { return port_; }
  void run();                  // returns after request_stop(), all connections closed
  static void request_stop();  // async-signal-safe

 private:
  void serve_connection(int fd, uint64_t number);
  Ledger& ledger_;
  bool split_writes_;
  int listen_fd_ = -1;
  int port_ = 0;
};

// Deterministic CPU work (work.cpp): `rounds` rounds of a 64-bit mixing
// function over a 64-byte state seeded by `seed`; returns the digest.
uint64_t mix_rounds(uint64_t seed, long rounds);

}  // namespace ledger
