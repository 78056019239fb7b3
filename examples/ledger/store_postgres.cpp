// The server backend: PostgreSQL through libpq, one connection per thread,
// every statement through PQexecParams (the '?' become $1, $2, ...).
#include <libpq-fe.h>

#include "ledger.hpp"
#include "schema.hpp"

namespace ledger {
namespace {

void ignore_notice(void*, const char*) {}

// '?' outside quotes → $1, $2, ...
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

class PostgresStore final : public Store {
 public:
  explicit PostgresStore(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(conn_) != CONNECTION_OK) {
      std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      PQfinish(conn_);
      throw StoreError("cannot connect to PostgreSQL (" + conninfo + "): " + why);
    }
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
    exec("SET synchronous_commit = off");
  }
  ~PostgresStore() override { PQfinish(conn_); }
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  Rows query(const std::string& sql, const std::vector<std::string>& params) override {
    auto it = converted_.find(sql);
    if (it == converted_.end()) it = converted_.emplace(sql, numbered_parameters(sql)).first;
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    PGresult* result = PQexecParams(conn_, it->second.c_str(), static_cast<int>(values.size()),
                                    nullptr, values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      std::string why = PQresultErrorMessage(result);
      while (!why.empty() && why.back() == '\n') why.pop_back();
      PQclear(result);
      if (PQstatus(conn_) == CONNECTION_BAD) PQreset(conn_);
      throw StoreError("PostgreSQL: " + why);
    }
    Rows rows;
    const int n = PQntuples(result), columns = PQnfields(result);
    rows.reserve(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      Row row;
      for (int c = 0; c < columns; ++c) row.emplace_back(PQgetvalue(result, r, c));
      rows.push_back(std::move(row));
    }
    PQclear(result);
    return rows;
  }

  void exec(const std::string& sql) override {
    PGresult* result = PQexec(conn_, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      std::string why = PQresultErrorMessage(result);
      while (!why.empty() && why.back() == '\n') why.pop_back();
      PQclear(result);
      throw StoreError("PostgreSQL: " + why + " (" + sql.substr(0, 60) + ")");
    }
    PQclear(result);
  }

  bool is_postgres() const override { return true; }
  void begin_write() override { query("BEGIN", {}); }

 private:
  PGconn* conn_;
  std::map<std::string, std::string> converted_;
};

}  // namespace

std::unique_ptr<Store> open_postgres(const std::string& conninfo) {
  return std::make_unique<PostgresStore>(conninfo);
}

void prepare_postgres(const Options& o) {
  PostgresStore store(o.postgres);
  create_and_seed(store, o);
}

}  // namespace ledger
