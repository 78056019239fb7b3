// The ticket office: the third system under test of `sonde diagnose`
// (README.md in this folder). One epoll event loop reads and writes every
// connection; a fixed pool of worker threads runs the handlers; SQLite is
// embedded. Everything is in namespace tickets, so that the patterns
// `-*;+tickets::*` monitor it, and `tickets::handle_request` starts one
// trace per request.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace tickets {

struct Options {
  int port = 8080;
  int workers = 16;
  int events = 400;
  int seats_per_event = 600;
  int seeded_orders = 8000;
  int reviews = 60000;
  int refresh_period_ms = 2000;
  int refresh_rounds = 0;   // 0: measured at start, ~300 ms of hashing
  int search_rounds = 40;   // best-seats search: scoring passes over the free seats
  int price_paths = 20000;  // --price-simulation: Monte Carlo demand paths
  int fraud_delay_ms = 40;
  int payment_delay_ms = 4;
  int flush_interval_ms = 20;
  std::string data_dir;
  std::string pid_file;
  // Planted problems (main.cpp describes each).
  bool refresh_pauses = false;
  bool unpruned_holds = false;
  bool slow_fraud_check = false;
  bool price_simulation = false;
  bool allocation_lock = false;
  bool seat_n_plus_one = false;
  bool review_scan = false;
  bool write_coalescing = false;
};

struct Request {
  std::string method;
  std::string path;                          // without the query string
  std::map<std::string, std::string> query;  // the query string and a form body
  bool keep_alive = true;
};

struct Response {
  int status = 200;
  std::string body;  // JSON
};

// "HTTP/1.1 200 OK ..." with Content-Length, ready to send.
std::string http_bytes(const Response& r, bool keep_alive);
// A JSON string literal of `text`, quotes included.
std::string json_string(const std::string& text);
// {"error": message} with that status.
Response error_response(int status, const std::string& message);
// Word number n of the reviews' vocabulary (three syllables).
std::string vocabulary_word(std::int64_t n);

// ---- The embedded database (catalog.cpp) ----------------------------------

// A prepared statement of this thread's connection, reset when the handle
// goes out of scope.
class Query {
 public:
  explicit Query(sqlite3_stmt* s) : s_(s) {}
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  Query& bind(int index, std::int64_t value);
  Query& bind(int index, const std::string& value);
  bool step();  // true: a row is there; false: done; throws on an error
  std::int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;

 private:
  sqlite3_stmt* s_;
};

// One SQLite file in a temporary folder (or --data-dir), created and seeded
// at start; every thread that asks gets its own connection.
class Catalog {
 public:
  explicit Catalog(const Options& o);
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  Query query(const char* sql);  // this thread's connection, statement cached
  void exec(const char* sql);    // this thread's connection, no result rows
  int changes();                 // rows the last statement of this thread changed
  std::int64_t last_id();        // rowid of this thread's last INSERT

 private:
  struct Connection;
  Connection& connection();
  void create_and_seed(const Options& o);
  void close_all();
  const std::uint64_t generation_;  // which catalog of the process (connection())
  std::string folder_;
  bool own_folder_ = false;
  std::string file_;
  std::mutex connections_mutex_;
  std::vector<std::unique_ptr<Connection>> connections_;
};

// ---- The external services (remote_service.cpp) ---------------------------

// A UDP service on loopback that answers every request after `delay_ms`,
// concurrently (requests do not queue behind each other): the fraud
// screening and the payment authorizer.
class RemoteService {
 public:
  explicit RemoteService(int delay_ms);
  ~RemoteService();
  RemoteService(const RemoteService&) = delete;
  RemoteService& operator=(const RemoteService&) = delete;
  int port() const { return port_; }

 private:
  void serve();
  int fd_ = -1;
  int stop_fd_ = -1;
  int port_ = 0;
  int delay_ms_;
  std::thread thread_;
};

// Asks the service about one order; false if it did not answer in 2 s.
bool ask_remote(int port, std::int64_t order_ref, const std::string& customer);

// ---- Pricing (pricing.cpp) -------------------------------------------------

// The demand multiplier of a section's price from its occupancy and the days
// to the show: closed form, or simulated over `paths` demand paths.
double demand_multiplier(int free_seats, int total_seats, int days_to_show);
double simulated_multiplier(int free_seats, int total_seats, int days_to_show, int paths,
                            std::uint64_t seed);
// `rounds` of a 64-bit mixing hash over `seed` (the cache refresh's work).
std::uint64_t mix_rounds(std::uint64_t seed, std::int64_t rounds);
// Rounds of mix_rounds that take about `ms` milliseconds on this machine.
std::int64_t rounds_for_ms(int ms);

// ---- The application (box_office.cpp) -------------------------------------

struct EventSummary {
  std::int64_t id = 0;
  std::string title;
  std::string venue;
  std::string city;
  std::int64_t starts_at = 0;  // unix seconds
  std::int64_t sold = 0;
  std::uint64_t popularity = 0;
};

struct Hold {
  std::int64_t event = 0;
  std::int64_t seat = 0;
  std::int64_t expires_at = 0;
};

class BoxOffice {
 public:
  BoxOffice(const Options& o, Catalog& catalog);
  ~BoxOffice();
  BoxOffice(const BoxOffice&) = delete;
  BoxOffice& operator=(const BoxOffice&) = delete;
  void start();  // the cache refresh thread
  void stop();
  Response handle(const Request& r);

 private:
  Response get_event(std::int64_t id);
  Response get_seats(std::int64_t id);
  Response post_order(const Request& r);
  Response get_order(std::int64_t id);
  Response search(const std::string& q);
  Response price(const Request& r);
  bool summary(std::int64_t id, EventSummary& out);
  std::vector<EventSummary> load_summaries(std::int64_t rounds);
  void refresh_loop();
  bool seat_held(std::int64_t event, std::int64_t seat);

  const Options& o_;
  Catalog& catalog_;
  std::unique_ptr<RemoteService> fraud_;
  RemoteService payments_;
  std::int64_t refresh_rounds_ = 0;
  std::shared_mutex cache_mutex_;
  std::vector<EventSummary> cache_;
  std::mutex allocation_mutex_;
  std::shared_mutex holds_mutex_;
  std::vector<Hold> holds_;
  std::atomic<std::int64_t> next_ref_{1};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread refresher_;
};

// One request, start to end: the trace boundary (trace_start).
Response handle_request(BoxOffice& office, const Request& r);

// ---- Threads and the event loop (worker_pool.cpp, event_loop.cpp) -------

struct Job {
  std::uint64_t connection = 0;
  Request request;
};

class WorkerPool {
 public:
  using Run = std::function<void(Job&)>;
  WorkerPool(int workers, Run run);
  ~WorkerPool();  // finishes the queued jobs, then joins
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  void submit(Job job);

 private:
  void work();
  void stop_and_join();
  Run run_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Accepts, reads and writes every connection on one thread (epoll); hands
// each complete request to the pool, one at a time per connection, and
// writes the answers the workers post back.
class EventLoop {
 public:
  EventLoop(int port, bool write_coalescing, int flush_interval_ms);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  int port() const { return port_; }
  void run(WorkerPool& pool);  // until request_stop()
  // Thread-safe: a worker's answer for a connection.
  void complete(std::uint64_t connection, std::string bytes);
  // Async-signal-safe.
  static void request_stop();

 private:
  struct Connection;
  void open(int port, int flush_interval_ms);
  void accept_all();
  // Each returns false once it has closed the connection (`c` is gone).
  bool read_from(Connection& c);
  bool dispatch(Connection& c, WorkerPool& pool);
  bool flush(Connection& c);
  void stop_reading(Connection& c);
  void finish_if_done(Connection& c);
  void drain_completions(WorkerPool& pool);
  void close_connection(std::uint64_t id);
  void watch(Connection& c, bool want_write);

  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int timer_fd_ = -1;
  int port_ = 0;
  bool write_coalescing_;
  bool accepting_ = true;  // the listening socket is watched
  std::uint64_t next_id_ = 16;
  std::map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::mutex completed_mutex_;
  std::vector<std::pair<std::uint64_t, std::string>> completed_;
};

}  // namespace tickets
