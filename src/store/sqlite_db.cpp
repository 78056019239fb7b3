#include "store/sqlite_db.hpp"

#include <utility>

namespace sonde::store {

SqliteDb::~SqliteDb() { close(); }

std::string SqliteDb::open(const std::string& path, int flags) {
  close();
  path_ = path;
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    close();
    return path + ": " + message;
  }
  // A reader meets a writer's commit now and then; wait instead of failing.
  sqlite3_busy_timeout(db_, 5000);
  return "";
}

void SqliteDb::close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

std::string SqliteDb::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return "";
  std::string text = path_ + ": " + (message ? message : sqlite3_errmsg(db_));
  sqlite3_free(message);
  return text;
}

std::string SqliteDb::error() const {
  return path_ + ": " + (db_ ? sqlite3_errmsg(db_) : "not open");
}

SqliteStatement::SqliteStatement(SqliteDb& db, const std::string& sql) : db_(db.handle()) {
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    error_ = db.error();
    stmt_ = nullptr;
  }
}

SqliteStatement::~SqliteStatement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), error_(std::move(other.error_)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    error_ = std::move(other.error_);
  }
  return *this;
}

void SqliteStatement::bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
void SqliteStatement::bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
void SqliteStatement::bind(int index, std::string_view value) {
  // An empty view may have a null data pointer, which SQLite would store as NULL.
  sqlite3_bind_text(stmt_, index, value.empty() ? "" : value.data(), static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
}

void SqliteStatement::bind_blob(int index, std::string_view bytes) {
  // Zero bytes must still be a BLOB, not NULL: pass a non-null pointer.
  static const char kEmpty = 0;
  sqlite3_bind_blob(stmt_, index, bytes.empty() ? &kEmpty : bytes.data(),
                    static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE)
    error_ = std::string(sqlite3_db_filename(db_, "main")) + ": " + sqlite3_errmsg(db_);
  return false;
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t SqliteStatement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqliteStatement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string SqliteStatement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}

std::string_view SqliteStatement::blob(int column) const {
  const void* p = sqlite3_column_blob(stmt_, column);
  return p ? std::string_view(static_cast<const char*>(p),
                              static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string_view();
}

}  // namespace sonde::store
