// The throw-away PostgreSQL server and the database sampler against a real
// server on 127.0.0.1: lock waiters and server CPU are sampled, an
// unreachable server is an error naming it, and the samples survive the
// samples.csv round trip into what Database Congestion reads.
#include "diagnose/database/postgres_sampler.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "diagnose/database/postgres_server.hpp"
#include "diagnose/engine/sut.hpp"
#include "diagnose/experiment_data.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose_test_support.hpp"

namespace sonde::diagnose::test {
namespace {

using database::PostgresSampler;
using database::PostgresServer;

// A libpq connection that fails the test when it cannot connect.
struct PgConnection {
  explicit PgConnection(const std::string& conninfo) : conn(PQconnectdb(conninfo.c_str())) {}
  ~PgConnection() { PQfinish(conn); }
  bool ok() const { return PQstatus(conn) == CONNECTION_OK; }
  void exec(const std::string& sql) {
    PGresult* r = PQexec(conn, sql.c_str());
    const ExecStatusType s = PQresultStatus(r);
    PQclear(r);
    ASSERT_TRUE(s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK)
        << sql << ": " << PQerrorMessage(conn);
  }
  // The first column of the first row as a number (-1 on an error).
  long number(const std::string& sql) {
    PGresult* r = PQexec(conn, sql.c_str());
    const long n = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0
                       ? std::atol(PQgetvalue(r, 0, 0))
                       : -1;
    PQclear(r);
    return n;
  }
  PGconn* conn;
};

TEST(PostgresSampler, SeesLockWaitersAndServerCpu) {
  std::unique_ptr<PostgresServer> server;
  ASSERT_NO_THROW(server = PostgresServer::start()) << "bash scripts/install-deps.sh installs it";
  PgConnection holder(server->conninfo()), waiter(server->conninfo());
  ASSERT_TRUE(holder.ok() && waiter.ok()) << PQerrorMessage(holder.conn);
  holder.exec("CREATE TABLE stock (product INTEGER PRIMARY KEY, quantity INTEGER)");
  holder.exec("BEGIN");
  holder.exec("LOCK TABLE stock IN EXCLUSIVE MODE");
  // The waiter blocks on the same lock (asynchronously, so the test goes
  // on; LOCK TABLE only runs inside a transaction block).
  ASSERT_EQ(PQsendQuery(waiter.conn, "BEGIN; LOCK TABLE stock IN EXCLUSIVE MODE"), 1);
  // The query is sent, not yet waiting: on a loaded machine the server may
  // take a while to get to it, and the first sample would see no waiter.
  PgConnection watcher(server->conninfo());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (watcher.number("SELECT count(*) FROM pg_locks WHERE NOT granted") < 1 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GE(watcher.number("SELECT count(*) FROM pg_locks WHERE NOT granted"), 1)
      << "the waiter never waited for the lock";

  PostgresSampler sampler(server->conninfo(), 20);
  sampler.start();
  ASSERT_EQ(sampler.error(), "");
  // Some server CPU to see: a query that computes for a while.
  PgConnection worker(server->conninfo());
  worker.exec("SELECT count(*) FROM generate_series(1, 3000000)");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  sampler.stop();
  holder.exec("COMMIT");
  while (PGresult* r = PQgetResult(waiter.conn)) PQclear(r);
  waiter.exec("COMMIT");

  EXPECT_EQ(sampler.error(), "");
  EXPECT_EQ(sampler.cpu_error(), "");
  int instants = 0, waiting_for_stock = 0, cpu_rows = 0;
  double cpu_s = 0;
  for (const SampledValue& v : sampler.samples()) {
    instants += v.metric == "active";
    if (v.metric == "lock_waiting" && v.key == "stock" && v.value == 1) ++waiting_for_stock;
    if (v.metric == "cpu_s") {
      EXPECT_GE(v.value, 0);
      cpu_s += v.value;
      ++cpu_rows;
    }
  }
  EXPECT_GE(instants, 3);
  // The waiter waited the whole time: at every instant.
  EXPECT_EQ(waiting_for_stock, instants);
  // Every instant after the first has a CPU row (differences need two).
  EXPECT_EQ(cpu_rows, instants - 1);
  EXPECT_GT(cpu_s, 0) << "the generate_series query ran inside the sampled time";
}

TEST(PostgresSampler, UnreachableServerIsAnErrorNamingIt) {
  const std::string conninfo =
      "host=127.0.0.1 port=" + std::to_string(engine::free_loopback_port()) +
      " user=sonde dbname=postgres connect_timeout=2";
  PostgresSampler sampler(conninfo, 20);
  sampler.start();
  sampler.stop();
  EXPECT_NE(sampler.error().find("cannot connect to PostgreSQL"), std::string::npos)
      << sampler.error();
  EXPECT_NE(sampler.error().find(conninfo), std::string::npos) << sampler.error();
  EXPECT_TRUE(sampler.samples().empty());
}

TEST(PostgresSampler, SamplesCsvRoundTripsIntoTheServerView) {
  TempDir dir;
  ExperimentSpec spec;
  spec.id = "load-u4";
  spec.requests = 50;
  const std::string exp = write_experiment(dir.path(), spec);
  nlohmann::json e;
  std::ifstream(exp + "/experiment.json") >> e;
  e["samplers"]["postgresql"] = {{"status", "ok"}, {"cpu", true}};
  std::ofstream(exp + "/experiment.json") << e.dump();
  // Three instants; "a, b" (a key with a comma) waits at the last only;
  // one row outside the stable phase is dropped.
  std::vector<SampledValue> rows;
  for (int t = 1; t <= 3; ++t) {
    rows.push_back({kT0 + t * kMs, "", "active", "", 1});
    rows.push_back({kT0 + t * kMs, "", "cpu_s", "", 0.25});
    rows.push_back({kT0 + t * kMs, "", "lock_waiting", "stock", static_cast<double>(t)});
  }
  rows.push_back({kT0 + 3 * kMs, "", "lock_waiting", "a, b", 2});
  rows.push_back({kT0 - kMs, "", "cpu_s", "", 100});
  database::write_samples_csv(exp + "/samples.csv", "postgresql", rows);

  const ExperimentData data = load_experiment_data(dir.path());
  ASSERT_EQ(data.experiments.size(), 1u);
  const heuristics::DatabaseServerSamples server =
      heuristics::database_server_samples(data.experiments[0]);
  EXPECT_TRUE(server.present);
  EXPECT_EQ(server.error, "");
  EXPECT_EQ(server.samples, 3u);
  EXPECT_DOUBLE_EQ(server.cpu_s, 0.75);
  EXPECT_EQ(server.lock_waiting.at("stock"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(server.lock_waiting.at("a, b"), (std::vector<double>{0, 0, 2}));
}

}  // namespace
}  // namespace sonde::diagnose::test
