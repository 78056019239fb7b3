// PostgreSQL calls through libpq with a known count, for the database probe:
//   test_libpq_calls CONNINFO INSERTS
// INSERTS + 3 calls, each in its own operation:
//   PQexec          CREATE TABLE items(id serial PRIMARY KEY, name text)   (pg.setup)
//   INSERTS x PQexecParams  INSERT INTO items(name) VALUES ($1)            (pg.insert)
//   PQexec          SELECT count(*) FROM items                             (pg.count)
//   PQexecPrepared  by_id (PQprepare'd; PQprepare itself is not recorded)  (pg.by_id)
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sonde/sonde.hpp"

namespace {

[[noreturn]] void die(PGconn* conn, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, PQerrorMessage(conn));
  std::exit(1);
}

void expect(PGconn* conn, PGresult* r, ExecStatusType status, const char* what) {
  if (PQresultStatus(r) != status) die(conn, what);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test_libpq_calls CONNINFO INSERTS\n");
    return 2;
  }
  int n = std::atoi(argv[2]);
  PGconn* conn = PQconnectdb(argv[1]);
  if (PQstatus(conn) != CONNECTION_OK) die(conn, "connect");
  {
    SONDE_SCOPE_NAMED("pg.setup");
    PGresult* r = PQexec(conn, "CREATE TABLE items(id serial PRIMARY KEY, name text)");
    expect(conn, r, PGRES_COMMAND_OK, "create");
    PQclear(r);
  }
  for (int i = 0; i < n; ++i) {
    SONDE_SCOPE_NAMED("pg.insert");
    std::string name = "item-" + std::to_string(i);
    const char* values[1] = {name.c_str()};
    PGresult* r = PQexecParams(conn, "INSERT INTO items(name) VALUES ($1)", 1, nullptr, values,
                               nullptr, nullptr, 0);
    expect(conn, r, PGRES_COMMAND_OK, "insert");
    PQclear(r);
  }
  {
    SONDE_SCOPE_NAMED("pg.count");
    PGresult* r = PQexec(conn, "SELECT count(*) FROM items");
    expect(conn, r, PGRES_TUPLES_OK, "count");
    if (std::atoi(PQgetvalue(r, 0, 0)) != n) die(conn, "count value");
    PQclear(r);
  }
  {
    SONDE_SCOPE_NAMED("pg.by_id");
    PGresult* p = PQprepare(conn, "by_id", "SELECT name FROM items WHERE id = $1", 1, nullptr);
    expect(conn, p, PGRES_COMMAND_OK, "prepare");
    PQclear(p);
    const char* values[1] = {"1"};
    PGresult* r = PQexecPrepared(conn, "by_id", 1, values, nullptr, nullptr, 0);
    expect(conn, r, PGRES_TUPLES_OK, "by_id");
    PQclear(r);
  }
  PQfinish(conn);
  return 0;
}
