// The embedded database: one SQLite file, a connection per thread, the
// statements prepared once per connection.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "tickets.hpp"

namespace tickets {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error(what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

// A writer that finds the database locked retries after a short pause that
// doubles from 20 us to 1 ms, instead of SQLite's default sleeps of 1 to
// 100 ms (which would put milliseconds of idle waiting into every
// contended order).
int back_off(void*, int attempt) {
  if (attempt > 4000) return 0;  // about four seconds: give up, SQLITE_BUSY
  const useconds_t pause = 20u << (attempt < 6 ? attempt : 6);
  ::usleep(pause < 1000 ? pause : 1000);
  return 1;
}

// The words of the reviews: syllable triples, so that the load driver can
// name a word by its number (GET /search?q=N).
const char* const kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "so", "ti", "va",
                                  "be", "do", "fu", "ga", "hi", "jo", "pe", "zu"};

std::atomic<std::uint64_t> next_generation{0};

}  // namespace

std::string vocabulary_word(std::int64_t n) {
  std::string w;
  for (int i = 0; i < 3; ++i) {
    w += kSyllables[n % 16];
    n /= 16;
  }
  return w;
}

// ---- Query ------------------------------------------------------------------

Query::~Query() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

Query& Query::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(s_, index, value) != SQLITE_OK) fail(sqlite3_db_handle(s_), "bind");
  return *this;
}

Query& Query::bind(int index, const std::string& value) {
  if (sqlite3_bind_text(s_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    fail(sqlite3_db_handle(s_), "bind");
  return *this;
}

bool Query::step() {
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(sqlite3_db_handle(s_), std::string("query '") + sqlite3_sql(s_) + "'");
}

std::int64_t Query::integer(int column) const { return sqlite3_column_int64(s_, column); }
double Query::real(int column) const { return sqlite3_column_double(s_, column); }
std::string Query::text(int column) const {
  const auto* p = sqlite3_column_text(s_, column);
  return p != nullptr ? std::string(reinterpret_cast<const char*>(p),
                                    static_cast<std::size_t>(sqlite3_column_bytes(s_, column)))
                      : std::string();
}

// ---- Catalog ----------------------------------------------------------------

struct Catalog::Connection {
  sqlite3* db = nullptr;
  std::unordered_map<const char*, sqlite3_stmt*> statements;
  ~Connection() {
    for (auto& [sql, s] : statements) sqlite3_finalize(s);
    sqlite3_close(db);
  }
};

Catalog::Catalog(const Options& o) : generation_(next_generation.fetch_add(1) + 1) {
  if (o.data_dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tickets-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary folder");
    folder_ = pattern;
    own_folder_ = true;
  } else {
    folder_ = o.data_dir;
    std::filesystem::create_directories(folder_);
  }
  file_ = (std::filesystem::path(folder_) / "tickets.db").string();
  try {
    std::filesystem::remove(file_);
    std::filesystem::remove(file_ + "-wal");
    std::filesystem::remove(file_ + "-shm");
    create_and_seed(o);
  } catch (...) {
    close_all();  // rolls back the seeding transaction
    throw;
  }
}

Catalog::~Catalog() { close_all(); }

// Closes every thread's connection (their threads have ended; the main
// thread's is among them), then removes a temporary folder.
void Catalog::close_all() {
  {
    std::lock_guard lock(connections_mutex_);
    connections_.clear();
  }
  if (own_folder_) {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }
}

Catalog::Connection& Catalog::connection() {
  // One connection per thread and catalog; the catalog owns it. The
  // generation tells a later catalog (at the same address, perhaps) from
  // one whose connections are closed.
  thread_local std::uint64_t mine_of = 0;
  thread_local Connection* mine = nullptr;
  if (mine_of != generation_) {
    mine = nullptr;
    mine_of = generation_;
  }
  if (mine == nullptr) {
    auto c = std::make_unique<Connection>();
    if (sqlite3_open_v2(file_.c_str(), &c->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK)
      fail(c->db, "open " + file_);
    sqlite3_busy_handler(c->db, back_off, nullptr);
    {
      std::lock_guard lock(connections_mutex_);
      connections_.push_back(std::move(c));
      mine = connections_.back().get();
    }
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=OFF");
  }
  return *mine;
}

Query Catalog::query(const char* sql) {
  Connection& c = connection();
  sqlite3_stmt*& s = c.statements[sql];
  if (s == nullptr &&
      sqlite3_prepare_v3(c.db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
    fail(c.db, std::string("prepare '") + sql + "'");
  return Query(s);
}

void Catalog::exec(const char* sql) {
  Connection& c = connection();
  char* error = nullptr;
  if (sqlite3_exec(c.db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error(std::string("'") + sql + "': " + message);
  }
}

int Catalog::changes() { return sqlite3_changes(connection().db); }

std::int64_t Catalog::last_id() { return sqlite3_last_insert_rowid(connection().db); }

void Catalog::create_and_seed(const Options& o) {
  exec(
      "CREATE TABLE tk_venue (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);"
      "CREATE TABLE tk_event (id INTEGER PRIMARY KEY, venue_id INTEGER NOT NULL, title TEXT NOT "
      "NULL,"
      "  starts_at INTEGER NOT NULL);"
      "CREATE TABLE tk_section (event_id INTEGER NOT NULL, section TEXT NOT NULL, tier TEXT NOT "
      "NULL,"
      "  surcharge_cents INTEGER NOT NULL, PRIMARY KEY (event_id, section)) WITHOUT ROWID;"
      "CREATE TABLE tk_row_view (event_id INTEGER NOT NULL, row_label TEXT NOT NULL,"
      "  rating INTEGER NOT NULL, PRIMARY KEY (event_id, row_label)) WITHOUT ROWID;"
      "CREATE TABLE tk_seat (event_id INTEGER NOT NULL, seat_no INTEGER NOT NULL, section TEXT NOT "
      "NULL,"
      "  row_label TEXT NOT NULL, price_cents INTEGER NOT NULL, sold INTEGER NOT NULL DEFAULT 0,"
      "  PRIMARY KEY (event_id, seat_no)) WITHOUT ROWID;"
      "CREATE TABLE tk_order (id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL, customer TEXT NOT "
      "NULL,"
      "  total_cents INTEGER NOT NULL, created_at INTEGER NOT NULL);"
      "CREATE TABLE tk_order_item (order_id INTEGER NOT NULL, seat_no INTEGER NOT NULL,"
      "  price_cents INTEGER NOT NULL);"
      "CREATE INDEX tk_order_item_by_order ON tk_order_item (order_id);"
      "CREATE TABLE tk_review (id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL, body TEXT NOT "
      "NULL);"
      "CREATE VIRTUAL TABLE tk_review_words USING fts5 (body, content='tk_review', "
      "content_rowid='id');");
  exec("BEGIN");
  const int venues = 40;
  const char* const cities[] = {"Lyon",   "Porto", "Graz",  "Leeds",
                                "Bremen", "Turin", "Ghent", "Brno"};
  for (int v = 1; v <= venues; ++v)
    query("INSERT INTO tk_venue (id, name, city) VALUES (?, ?, ?)")
        .bind(1, v)
        .bind(2, "Hall " + std::to_string(v))
        .bind(3, cities[v % 8])
        .step();
  const char* const sections[] = {"A", "B", "C", "D", "E"};
  const char* const tiers[] = {"front", "stalls", "stalls", "circle", "gallery"};
  const std::int64_t base_time = 1798761600;  // 2027-01-01
  for (int e = 1; e <= o.events; ++e) {
    query("INSERT INTO tk_event (id, venue_id, title, starts_at) VALUES (?, ?, ?, ?)")
        .bind(1, e)
        .bind(2, 1 + e % venues)
        .bind(3, "Concert " + std::to_string(e) + " " + vocabulary_word(e * 7))
        .bind(4, base_time + static_cast<std::int64_t>(e) * 86400)
        .step();
    for (int s = 0; s < 5; ++s)
      query("INSERT INTO tk_section (event_id, section, tier, surcharge_cents) VALUES (?, ?, ?, ?)")
          .bind(1, e)
          .bind(2, sections[s])
          .bind(3, tiers[s])
          .bind(4, (5 - s) * 250)
          .step();
    for (int row = 1; row <= (o.seats_per_event + 19) / 20; ++row)
      query("INSERT INTO tk_row_view (event_id, row_label, rating) VALUES (?, ?, ?)")
          .bind(1, e)
          .bind(2, std::to_string(row))
          .bind(3, std::max(10, 100 - 5 * (row - 1)))  // the front rows see best
          .step();
    for (int seat = 1; seat <= o.seats_per_event; ++seat) {
      const int section = (seat - 1) * 5 / o.seats_per_event;
      query(
          "INSERT INTO tk_seat (event_id, seat_no, section, row_label, price_cents) VALUES (?, ?, "
          "?, ?, ?)")
          .bind(1, e)
          .bind(2, seat)
          .bind(3, sections[section])
          .bind(4, std::to_string((seat - 1) / 20 + 1))  // 20 seats a row
          .bind(5, 9000 - section * 1500)
          .step();
    }
  }
  // Orders already placed: three neighbouring seats each, taken from the
  // front of every event (with the defaults, a tenth of every event is sold).
  for (int n = 1; n <= o.seeded_orders; ++n) {
    const int event = 1 + n % o.events;
    const std::int64_t first = 1 + ((n / o.events) * 3) % o.seats_per_event;
    query(
        "INSERT INTO tk_order (id, event_id, customer, total_cents, created_at) VALUES (?, ?, ?, "
        "?, ?)")
        .bind(1, n)
        .bind(2, event)
        .bind(3, "c" + std::to_string(n % 5000))
        .bind(4, 3 * 7500)
        .bind(5, base_time - 86400 + n)
        .step();
    for (std::int64_t seat = first; seat < first + 3 && seat <= o.seats_per_event; ++seat) {
      query("INSERT INTO tk_order_item (order_id, seat_no, price_cents) VALUES (?, ?, ?)")
          .bind(1, n)
          .bind(2, seat)
          .bind(3, 7500)
          .step();
      query("UPDATE tk_seat SET sold = 1 WHERE event_id = ? AND seat_no = ?")
          .bind(1, event)
          .bind(2, seat)
          .step();
    }
  }
  // Reviews: twelve vocabulary words each, 2000 words in all, so a word is
  // in about 360 reviews of 60,000.
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int r = 1; r <= o.reviews; ++r) {
    std::string body;
    for (int w = 0; w < 12; ++w) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      if (!body.empty()) body += ' ';
      body += vocabulary_word(static_cast<std::int64_t>(x % 2000));
    }
    query("INSERT INTO tk_review (id, event_id, body) VALUES (?, ?, ?)")
        .bind(1, r)
        .bind(2, 1 + r % o.events)
        .bind(3, body)
        .step();
  }
  exec("INSERT INTO tk_review_words (tk_review_words) VALUES ('rebuild')");
  exec("COMMIT");
  exec("ANALYZE");
}

}  // namespace tickets
