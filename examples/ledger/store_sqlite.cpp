// The embedded backend: one SQLite file, WAL, one connection per thread,
// prepared statements cached per connection. A writer that finds the
// database locked backs off for 20 µs, doubling up to 1 ms (SQLite's own
// busy timeout sleeps whole milliseconds from the first retry).
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <unordered_map>

#include "ledger.hpp"
#include "schema.hpp"

namespace ledger {
namespace {

int busy_backoff(void*, int attempt) {
  if (attempt > 20000) return 0;  // about 20 s: give up (SQLITE_BUSY)
  const int us = attempt < 6 ? 20 << attempt : 1000;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
  return 1;
}

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(const std::string& file) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw StoreError("cannot open SQLite database " + file + ": " + why);
    }
    sqlite3_busy_handler(db_, busy_backoff, nullptr);
    exec("PRAGMA synchronous=OFF");
  }
  ~SqliteStore() override {
    for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
    sqlite3_close(db_);
  }
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  Rows query(const std::string& sql, const std::vector<std::string>& params) override {
    sqlite3_stmt* statement = prepared(sql);
    for (size_t i = 0; i < params.size(); ++i)
      sqlite3_bind_text(statement, static_cast<int>(i + 1), params[i].data(),
                        static_cast<int>(params[i].size()), SQLITE_TRANSIENT);
    Rows rows;
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
      Row row;
      const int columns = sqlite3_column_count(statement);
      for (int c = 0; c < columns; ++c) {
        const unsigned char* text = sqlite3_column_text(statement, c);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    if (rc != SQLITE_DONE) throw StoreError(std::string("SQLite: ") + sqlite3_errmsg(db_));
    return rows;
  }

  void exec(const std::string& sql) override {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string why = error ? error : "unknown error";
      sqlite3_free(error);
      throw StoreError("SQLite: " + why + " (" + sql.substr(0, 60) + ")");
    }
  }

  bool is_postgres() const override { return false; }
  void begin_write() override { query("BEGIN IMMEDIATE", {}); }

 private:
  sqlite3_stmt* prepared(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) return it->second;
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK)
      throw StoreError(std::string("SQLite: ") + sqlite3_errmsg(db_) + " in " + sql);
    statements_.emplace(sql, statement);
    return statement;
  }

  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace

std::unique_ptr<Store> open_sqlite(const std::string& file) {
  return std::make_unique<SqliteStore>(file);
}

std::string prepare_sqlite(const Options& o, std::string& temp_dir) {
  std::string dir = o.data_dir;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ledger-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw StoreError("cannot create a temporary directory under " + pattern);
    dir = temp_dir = pattern;
  } else {
    std::filesystem::create_directories(dir);
  }
  const std::string file = dir + "/ledger.db";
  SqliteStore store(file);
  store.exec("PRAGMA journal_mode=WAL");
  create_and_seed(store, o);
  return file;
}

}  // namespace ledger
