// The shop's embedded database: SQLite, one connection per thread,
// statements prepared per call (so sonde's SQLite probe sees every
// statement with its text).
#include <sqlite3.h>

#include <map>
#include <stdexcept>

#include "shop.hpp"

namespace shop {
namespace {

constexpr int kSeededCustomers = 200;
constexpr int kSeededOrdersPerCustomer = 20;
constexpr int kSeededLinesPerOrder = 4;

void check(int rc, sqlite3* db, const std::string& what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw std::runtime_error(what + ": " + sqlite3_errmsg(db));
}

class SqliteRow : public Row {
 public:
  explicit SqliteRow(sqlite3_stmt* stmt) : stmt_(stmt) {}
  long long integer(int column) const override { return sqlite3_column_int64(stmt_, column); }
  std::string text(int column) const override {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    return t != nullptr ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  sqlite3_stmt* stmt_;
};

class SqliteDatabase : public Database {
 public:
  explicit SqliteDatabase(std::string path) : path_(std::move(path)) {
    exec("PRAGMA journal_mode=WAL");
  }
  ~SqliteDatabase() override {
    for (sqlite3* c : connections_) sqlite3_close(c);
  }

  void query(const std::string& sql, const std::vector<std::string>& params,
             const std::function<void(const Row&)>& row) override {
    sqlite3* c = connection();
    sqlite3_stmt* stmt = nullptr;
    check(sqlite3_prepare_v2(c, sql.c_str(), -1, &stmt, nullptr), c, sql);
    for (size_t i = 0; i < params.size(); ++i)
      sqlite3_bind_text(stmt, static_cast<int>(i + 1), params[i].c_str(), -1, SQLITE_TRANSIENT);
    int rc;
    const SqliteRow current(stmt);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
      if (row) row(current);
    sqlite3_finalize(stmt);
    check(rc, c, sql);
  }

  void begin_write() override { exec("BEGIN IMMEDIATE"); }
  void begin_locking(const std::string&) override { exec("BEGIN IMMEDIATE"); }
  std::string describe() const override { return "SQLite " + path_; }

  void seed(int products) override {
    for (const char* table : {"order_line", "orders", "stock", "product"})
      exec(std::string("DROP TABLE IF EXISTS ") + table);
    exec(
        "CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT, category INTEGER, "
        "price INTEGER, description TEXT)");
    exec("CREATE TABLE stock (product INTEGER PRIMARY KEY, quantity INTEGER)");
    exec(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, customer INTEGER, "
        "total INTEGER)");
    exec("CREATE INDEX orders_customer ON orders(customer)");
    exec(
        "CREATE TABLE order_line (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER, "
        "product INTEGER, quantity INTEGER)");
    exec("CREATE INDEX order_line_order ON order_line(order_id)");
    exec("BEGIN");
    for (int id = 1; id <= products; ++id) {
      const std::string s = std::to_string(id);
      query("INSERT INTO product VALUES (?, ?, ?, ?, ?)",
            {s, "product " + s, std::to_string(id % 20), std::to_string(100 + id % 900),
             "a fine product number " + s + " with a long description"},
            {});
      query("INSERT INTO stock VALUES (?, 1000000)", {s}, {});
    }
    // The same history as the PostgreSQL backend's: order o of customer u
    // has lines for the products 1 + (13u + 5o + line) mod products.
    for (int user = 0; user < kSeededCustomers; ++user) {
      for (int order = 0; order < kSeededOrdersPerCustomer; ++order) {
        query("INSERT INTO orders (customer, total) VALUES (?, 0)", {std::to_string(user)}, {});
        const std::string id = std::to_string(sqlite3_last_insert_rowid(connection()));
        for (int line = 0; line < kSeededLinesPerOrder; ++line)
          query("INSERT INTO order_line (order_id, product, quantity) VALUES (?, ?, 1)",
                {id, std::to_string(1 + (user * 13 + order * 5 + line) % products)}, {});
      }
    }
    exec("COMMIT");
  }

 private:
  sqlite3* connection() {
    // Per thread and per database; the pointer stays valid until the
    // destructor, which runs after the HTTP server's threads are joined.
    thread_local std::map<const SqliteDatabase*, sqlite3*> mine;
    auto found = mine.find(this);
    if (found != mine.end()) return found->second;
    sqlite3* c = nullptr;
    if (sqlite3_open(path_.c_str(), &c) != SQLITE_OK) {
      std::string error = c ? sqlite3_errmsg(c) : "out of memory";
      sqlite3_close(c);
      throw std::runtime_error("cannot open database " + path_ + ": " + error);
    }
    sqlite3_busy_timeout(c, 10000);
    // A demo database need not survive power loss; without this every
    // commit waits for fsync and the clean shop would look I/O bound.
    sqlite3_exec(c, "PRAGMA synchronous=OFF", nullptr, nullptr, nullptr);
    {
      std::lock_guard lock(connections_mutex_);
      connections_.push_back(c);
    }
    mine[this] = c;
    return c;
  }

  std::string path_;
  std::mutex connections_mutex_;
  std::vector<sqlite3*> connections_;
};

}  // namespace

std::unique_ptr<Database> open_sqlite(const std::string& path) {
  return std::make_unique<SqliteDatabase>(path);
}

}  // namespace shop
