// Thin RAII wrappers over SQLite's C API for the index writer and the
// SQLite trace store: errors come back as text naming the database file and
// SQLite's reason, never as exceptions or crashes.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace sonde::store {

class SqliteStatement;

class SqliteDb {
 public:
  SqliteDb() = default;
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // flags: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  // Returns "" or an error naming the file.
  std::string open(const std::string& path, int flags);
  void close();
  bool is_open() const { return db_ != nullptr; }
  // Runs one or more statements without results. Returns "" or the error.
  std::string exec(const std::string& sql);
  // The last error, prefixed with the file name.
  std::string error() const;
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class SqliteStatement {
 public:
  SqliteStatement() = default;
  // Prepares `sql`; ok() is false (and error() says why) if it fails.
  SqliteStatement(SqliteDb& db, const std::string& sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  const std::string& error() const { return error_; }

  // Parameters are 1-based, as in SQLite.
  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  // A BLOB (bytes, not text: SQL string functions do not apply to it).
  void bind_blob(int index, std::string_view bytes);
  // Returns true while there is a row; false when done or on error
  // (then error() is set).
  bool step();
  // Resets for the next use with new bindings.
  void reset();

  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  // The bytes of a BLOB column, valid until the next step() or reset().
  std::string_view blob(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string error_;
};

// Holds a read transaction so the statements of one call see one snapshot
// (WAL mode: a collector's later commits stay invisible until it ends).
class SqliteReadSnapshot {
 public:
  explicit SqliteReadSnapshot(SqliteDb& db) : db_(db) { db_.exec("BEGIN"); }
  ~SqliteReadSnapshot() { db_.exec("COMMIT"); }
  SqliteReadSnapshot(const SqliteReadSnapshot&) = delete;
  SqliteReadSnapshot& operator=(const SqliteReadSnapshot&) = delete;

 private:
  SqliteDb& db_;
};

}  // namespace sonde::store
