// The shop on a PostgreSQL server (--postgres CONNINFO): one libpq
// connection per thread, every statement through PQexecParams, which is
// what sonde's libpq probe measures (one DatabaseCall per statement, with
// its text). Seeding uses set-based INSERTs: a fresh catalogue per start
// costs a few statements, not tens of thousands of round trips.
#include <libpq-fe.h>

#include <map>
#include <stdexcept>

#include "shop.hpp"

namespace shop {
namespace {

// "... = ? AND ... = ?" -> "... = $1 AND ... = $2" (outside quoted text).
std::string numbered_parameters(const std::string& sql) {
  std::string out;
  int n = 0;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted) {
      out += "$" + std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

class PostgresRow : public Row {
 public:
  PostgresRow(const PGresult* result, int row) : result_(result), row_(row) {}
  long long integer(int column) const override {
    return std::strtoll(PQgetvalue(result_, row_, column), nullptr, 10);
  }
  std::string text(int column) const override { return PQgetvalue(result_, row_, column); }

 private:
  const PGresult* result_;
  int row_;
};

class PostgresDatabase : public Database {
 public:
  explicit PostgresDatabase(std::string conninfo) : conninfo_(std::move(conninfo)) {
    connection();  // fail at start, not at the first request
  }
  ~PostgresDatabase() override {
    for (PGconn* c : connections_) PQfinish(c);
  }

  void query(const std::string& sql, const std::vector<std::string>& params,
             const std::function<void(const Row&)>& row) override {
    PGconn* c = connection();
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    const std::string numbered = numbered_parameters(sql);
    PGresult* result = PQexecParams(c, numbered.c_str(), static_cast<int>(values.size()), nullptr,
                                    values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      std::string error = sql + ": " + PQerrorMessage(c);
      PQclear(result);
      // A failed statement aborts its transaction; without the rollback
      // every later statement on this thread's connection would fail too.
      if (PQtransactionStatus(c) == PQTRANS_INERROR) PQclear(PQexec(c, "ROLLBACK"));
      throw std::runtime_error(error);
    }
    if (row)
      for (int r = 0; r < PQntuples(result); ++r) row(PostgresRow(result, r));
    PQclear(result);
  }

  void begin_write() override { exec("BEGIN"); }
  void begin_locking(const std::string& table) override {
    exec("BEGIN");
    exec("LOCK TABLE " + table + " IN EXCLUSIVE MODE");
  }
  std::string describe() const override { return "PostgreSQL " + conninfo_; }

  void seed(int products) override {
    exec("DROP TABLE IF EXISTS order_line, orders, stock, product");
    exec(
        "CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT, category INTEGER, "
        "price INTEGER, description TEXT)");
    exec("CREATE TABLE stock (product INTEGER PRIMARY KEY, quantity INTEGER)");
    exec("CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, customer INTEGER, total INTEGER)");
    exec("CREATE INDEX orders_customer ON orders(customer)");
    exec(
        "CREATE TABLE order_line (id BIGSERIAL PRIMARY KEY, order_id BIGINT, product INTEGER, "
        "quantity INTEGER)");
    exec("CREATE INDEX order_line_order ON order_line(order_id)");
    const std::string n = std::to_string(products);
    exec(
        "INSERT INTO product SELECT g, 'product ' || g, g % 20, 100 + g % 900, "
        "'a fine product number ' || g || ' with a long description' "
        "FROM generate_series(1, " +
        n + ") g");
    exec("INSERT INTO stock SELECT g, 1000000 FROM generate_series(1, " + n + ") g");
    // The SQLite backend's history: 20 orders per customer 0..199, in
    // order, so order o of customer u has id 20u + o + 1; its 4 lines are
    // the products 1 + (13u + 5o + line) mod products.
    exec(
        "INSERT INTO orders (customer, total) SELECT u, 0 FROM generate_series(0, 199) u, "
        "generate_series(0, 19) o ORDER BY u, o");
    exec(
        "INSERT INTO order_line (order_id, product, quantity) SELECT o.id, 1 + (o.customer * 13 "
        "+ ((o.id - 1) % 20) * 5 + line) % " +
        n +
        ", 1 FROM orders o, generate_series(0, 3) line "
        "ORDER BY o.id, line");
    exec("ANALYZE");
  }

 private:
  PGconn* connection() {
    // Per thread and per database, valid until the destructor, which runs
    // after the HTTP server's threads are joined.
    thread_local std::map<const PostgresDatabase*, PGconn*> mine;
    auto found = mine.find(this);
    if (found != mine.end()) return found->second;
    PGconn* c = PQconnectdb(conninfo_.c_str());
    if (PQstatus(c) != CONNECTION_OK) {
      std::string error = c != nullptr ? PQerrorMessage(c) : "out of memory";
      PQfinish(c);
      throw std::runtime_error("cannot connect to PostgreSQL (" + conninfo_ + "): " + error);
    }
    PQclear(PQexec(c, "SET synchronous_commit = off"));  // as SQLite's synchronous=OFF
    {
      std::lock_guard lock(connections_mutex_);
      connections_.push_back(c);
    }
    mine[this] = c;
    return c;
  }

  std::string conninfo_;
  std::mutex connections_mutex_;
  std::vector<PGconn*> connections_;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& conninfo) {
  return std::make_unique<PostgresDatabase>(conninfo);
}

}  // namespace shop
