// SQLite access of the shop: one connection per thread, prepared per call
// (so sonde's SQLite probe sees every statement with its text).
#include <stdexcept>

#include "shop.hpp"

namespace shop {
namespace {

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
}

}  // namespace

Database::Database(std::string path) : path_(std::move(path)) { exec("PRAGMA journal_mode=WAL"); }

Database::~Database() {
  for (sqlite3* c : connections_) sqlite3_close(c);
}

sqlite3* Database::connection() {
  // Per thread and per database; the pointer stays valid until ~Database,
  // which runs after the HTTP server's threads are joined.
  thread_local std::map<const Database*, sqlite3*> mine;
  auto found = mine.find(this);
  if (found != mine.end()) return found->second;
  sqlite3* c = nullptr;
  if (sqlite3_open(path_.c_str(), &c) != SQLITE_OK) {
    std::string error = c ? sqlite3_errmsg(c) : "out of memory";
    sqlite3_close(c);
    throw std::runtime_error("cannot open database " + path_ + ": " + error);
  }
  sqlite3_busy_timeout(c, 10000);
  // A demo database need not survive power loss; without this every commit
  // waits for fsync and the clean shop would look I/O bound.
  sqlite3_exec(c, "PRAGMA synchronous=OFF", nullptr, nullptr, nullptr);
  {
    std::lock_guard lock(connections_mutex_);
    connections_.push_back(c);
  }
  mine[this] = c;
  return c;
}

void Database::exec(const std::string& sql) { query(sql, {}); }

void Database::query(const std::string& sql, const std::vector<std::string>& params,
                     const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3* c = connection();
  sqlite3_stmt* stmt = nullptr;
  check(sqlite3_prepare_v2(c, sql.c_str(), -1, &stmt, nullptr), c, sql.c_str());
  for (size_t i = 0; i < params.size(); ++i)
    sqlite3_bind_text(stmt, static_cast<int>(i + 1), params[i].c_str(), -1, SQLITE_TRANSIENT);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    if (row) row(stmt);
  sqlite3_finalize(stmt);
  check(rc, c, sql.c_str());
}

namespace {
constexpr int kSeededOrdersPerUser = 20;
}  // namespace

void Database::seed(int products) {
  exec(
      "CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT, category INTEGER, "
      "price INTEGER, description TEXT)");
  exec("CREATE TABLE stock (product INTEGER PRIMARY KEY, quantity INTEGER)");
  exec("CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, user INTEGER, total INTEGER)");
  exec("CREATE INDEX orders_user ON orders(user)");
  exec(
      "CREATE TABLE order_line (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER, "
      "product INTEGER, quantity INTEGER)");
  exec("CREATE INDEX order_line_order ON order_line(order_id)");
  exec("BEGIN");
  for (int id = 1; id <= products; ++id) {
    const std::string s = std::to_string(id);
    query("INSERT INTO product VALUES (?, ?, ?, ?, ?)",
          {s, "product " + s, std::to_string(id % 20), std::to_string(100 + id % 900),
           "a fine product number " + s + " with a long description"});
    query("INSERT INTO stock VALUES (?, 1000000)", {s});
  }
  // An order history for users 0..199: 20 orders of 4 lines each, so
  // GET /orders has a customer's page of rows to fetch from the start.
  for (int user = 0; user < 200; ++user) {
    for (int order = 0; order < kSeededOrdersPerUser; ++order) {
      query("INSERT INTO orders (user, total) VALUES (?, 0)", {std::to_string(user)});
      const std::string id = std::to_string(sqlite3_last_insert_rowid(connection()));
      for (int line = 0; line < 4; ++line)
        query("INSERT INTO order_line (order_id, product, quantity) VALUES (?, ?, 1)",
              {id, std::to_string(1 + (user * 13 + order * 5 + line) % products)});
    }
  }
  exec("COMMIT");
}

}  // namespace shop
