// SQLite statements with a known count, for the SQLite probe:
//   test_sqlite_calls DBFILE INSERTS [reload]
// Runs INSERTS + 4 statement executions, each in its own operation:
//   sqlite3_exec  CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)
//   INSERTS x     INSERT INTO items(name) VALUES (?1)   (one prepared
//                 statement, bound to 'item-<i>', stepped, reset)
//   1 x           SELECT id, name FROM items ORDER BY id (stepped to the end)
//   1 x           SELECT name FROM items WHERE id > ?1   (first row only, finalized)
//   sqlite3_exec  SELECT count(*) FROM items
// "reload": all of that with the probe off, then SONDE_PROBES_FILE gets
// probe_database = on and, once applied, the INSERTS inserts run again: only
// those INSERTS executions may be recorded.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "sonde/records.h"
#include "sonde/sonde.hpp"

namespace {

[[noreturn]] void die(sqlite3* db, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, db != nullptr ? sqlite3_errmsg(db) : "?");
  std::exit(1);
}

void inserts(sqlite3* db, int n, int first) {
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db, "INSERT INTO items(name) VALUES (?1)", -1, &insert, nullptr) !=
      SQLITE_OK) {
    die(db, "prepare insert");
  }
  for (int i = first; i < first + n; ++i) {
    SONDE_SCOPE_NAMED("db.insert");
    std::string name = "item-" + std::to_string(i);
    sqlite3_bind_text(insert, 1, name.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(insert) != SQLITE_DONE) die(db, "insert");
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
}

int count_rows(void* out, int, char** values, char**) {
  *static_cast<int*>(out) = std::atoi(values[0]);
  return 0;
}

void all_statements(sqlite3* db, int n) {
  {
    SONDE_SCOPE_NAMED("db.setup");
    if (sqlite3_exec(db, "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)", nullptr, nullptr,
                     nullptr) != SQLITE_OK) {
      die(db, "create");
    }
  }
  inserts(db, n, 0);
  {
    SONDE_SCOPE_NAMED("db.scan");
    sqlite3_stmt* scan = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT id, name FROM items ORDER BY id", -1, &scan, nullptr) !=
        SQLITE_OK) {
      die(db, "prepare scan");
    }
    int rows = 0;
    while (sqlite3_step(scan) == SQLITE_ROW) ++rows;
    sqlite3_finalize(scan);
    if (rows != n) die(db, "scan row count");
  }
  {
    SONDE_SCOPE_NAMED("db.first");
    sqlite3_stmt* first = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT name FROM items WHERE id > ?1", -1, &first, nullptr) !=
        SQLITE_OK) {
      die(db, "prepare first");
    }
    sqlite3_bind_int(first, 1, 0);
    if (sqlite3_step(first) != SQLITE_ROW) die(db, "first row");
    sqlite3_finalize(first);  // abandoned after one row
  }
  {
    SONDE_SCOPE_NAMED("db.count");
    int count = -1;
    if (sqlite3_exec(db, "SELECT count(*) FROM items", count_rows, &count, nullptr) != SQLITE_OK)
      die(db, "count");
    if (count != n) die(db, "count value");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test_sqlite_calls DBFILE INSERTS [reload]\n");
    return 2;
  }
  int n = std::atoi(argv[2]);
  bool reload = argc > 3 && std::string(argv[3]) == "reload";
  sqlite3* db = nullptr;
  if (sqlite3_open(argv[1], &db) != SQLITE_OK) die(db, "open");
  if (!reload) {
    all_statements(db, n);
    sqlite3_close(db);
    return 0;
  }
  const char* file = std::getenv("SONDE_PROBES_FILE");
  if (file == nullptr) {
    std::fprintf(stderr, "reload needs SONDE_PROBES_FILE\n");
    return 2;
  }
  if (sonde_probe_enabled("database") != 0) {
    std::fprintf(stderr, "sqlite probe on before the probes file enabled it\n");
    return 3;
  }
  all_statements(db, n);
  std::ofstream(file) << "probe_database = on\n";
  for (int i = 0; i < 10000 && sonde_probe_enabled("database") != 1; ++i) {
    timespec nap{0, 1000000};
    nanosleep(&nap, nullptr);
  }
  if (sonde_probe_enabled("database") != 1) {
    std::fprintf(stderr, "the probes file was not applied within 10 s\n");
    return 4;
  }
  inserts(db, n, n);
  sqlite3_close(db);
  return 0;
}
