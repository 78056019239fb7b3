// The database probe on PostgreSQL's libpq against a real server: a
// throw-away cluster (initdb, fsync off) on a free loopback port, stopped
// after the test. Skipped, saying why, where PostgreSQL's server binaries
// or the libpq test program are missing.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "format/callable_schemas.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

namespace fs = std::filesystem;

std::string command_output(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

// A PostgreSQL server in `dir`; PostgreSQL refuses to run as root, so as
// root it runs as the "postgres" user.
class Server {
 public:
  explicit Server(const std::string& dir) : dir_(dir) {}
  ~Server() {
    if (started_) {
      std::string stop = as_user() + bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate stop";
      std::system((stop + " >/dev/null 2>&1").c_str());
    }
  }

  // "" or why the server cannot run here.
  std::string start() {
    bin_ = command_output("pg_config --bindir 2>/dev/null");
    if (bin_.empty() || !fs::exists(bin_ + "/initdb") || !fs::exists(bin_ + "/pg_ctl")) {
      return "PostgreSQL server binaries not found (pg_config --bindir: '" + bin_ + "')";
    }
    if (geteuid() == 0) {
      if (command_output("id -u postgres 2>/dev/null").empty()) {
        return "running as root without a postgres user";
      }
      std::system(("chown -R postgres " + dir_).c_str());
    }
    port_ = free_port();
    // initdb's output is redirected by this (maybe root) shell, the
    // server's log written by the server's user: two files.
    std::string init_log = dir_ + "/initdb.log", log = dir_ + "/server.log";
    std::string init = as_user() + bin_ + "/initdb -D " + dir_ +
                       "/data -U sonde --auth=trust --no-sync -E UTF8 >" + init_log + " 2>&1";
    if (std::system(init.c_str()) != 0) return "initdb failed, see " + init_log;
    std::string start = as_user() + bin_ + "/pg_ctl -D " + dir_ + "/data -w -l " + log +
                        " -o '-k " + dir_ + " -p " + std::to_string(port_) +
                        " -c listen_addresses=127.0.0.1 -F' start >/dev/null 2>&1";
    if (std::system(start.c_str()) != 0) return "the server did not start, see " + log;
    started_ = true;
    return "";
  }

  std::string conninfo() const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " user=sonde dbname=postgres";
  }
  int port() const { return port_; }

 private:
  std::string as_user() const { return geteuid() == 0 ? "runuser -u postgres -- " : ""; }
  std::string dir_, bin_;
  int port_ = -1;
  bool started_ = false;
};

struct Call {
  int64_t trace_id = 0, order_index = 0, duration = 0;
  bool prepared = false;
  std::string sql, bound, url, product;
};

class CallCollector final : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    if (r.schema->class_name != format::callable_class::kDatabaseCall) return true;
    namespace f = format::db_field;
    calls.push_back({r.i64(1), r.i64(2), r.i64(f::kDuration), r.flag(f::kPrepared),
                     std::string(r.str(f::kSqlStatement)),
                     std::string(r.str(f::kBoundSqlStatement)), std::string(r.str(f::kDbUrl)),
                     std::string(r.str(f::kDbProductName))});
    return true;
  }
  std::vector<Call> calls;
};

TEST(InterposeLibpq, OneRecordPerCallWithItsSql) {
  std::string program = kPrograms + "/test_libpq_calls";
  if (!fs::exists(program)) GTEST_SKIP() << "built without libpq (no " << program << ")";
  std::string out = fresh_dir("interpose_libpq");
  Server server(out);
  if (std::string why = server.start(); !why.empty()) GTEST_SKIP() << why;
  const int inserts = 20;
  RunResult r =
      run_program({program, server.conninfo(), std::to_string(inserts)},
                  {"SONDE_OUT=" + out, "SONDE_SUMMARY=false", "SONDE_PROBE_DATABASE=true"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("probe_database"), std::string::npos) << r.stderr_text;
  std::vector<std::string> logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 1u);
  LogContents contents = read_contents(logs[0]);
  CallCollector collector;
  format::LogReadStats stats = format::read_log(logs[0], collector);
  ASSERT_TRUE(stats.ok);
  EXPECT_EQ(stats.skipped, 0u);
  ASSERT_EQ(collector.calls.size(), static_cast<size_t>(inserts + 3));
  std::map<std::string, int> by_sql;
  std::map<std::string, std::string> operation_of;
  for (const Call& c : collector.calls) {
    ++by_sql[c.sql];
    EXPECT_GE(c.duration, 0);
    EXPECT_EQ(c.product, "PostgreSQL");
    EXPECT_EQ(c.url, "postgresql://127.0.0.1:" + std::to_string(server.port()) + "/postgres");
    EXPECT_EQ(c.order_index, 0);
    auto t = contents.traces.find(c.trace_id);
    ASSERT_NE(t, contents.traces.end()) << c.sql;
    operation_of[c.sql] = t->second.events.at(0).operation;
  }
  const std::string create = "CREATE TABLE items(id serial PRIMARY KEY, name text)";
  const std::string insert = "INSERT INTO items(name) VALUES ($1)";
  EXPECT_EQ(by_sql[create], 1);
  EXPECT_EQ(by_sql[insert], inserts);
  EXPECT_EQ(by_sql["SELECT count(*) FROM items"], 1);
  EXPECT_EQ(by_sql["EXECUTE by_id"], 1);
  EXPECT_EQ(by_sql.size(), 4u);
  EXPECT_EQ(operation_of[create], "pg.setup");
  EXPECT_EQ(operation_of[insert], "pg.insert");
  EXPECT_EQ(operation_of["EXECUTE by_id"], "pg.by_id");
  for (const Call& c : collector.calls) {
    EXPECT_EQ(c.prepared, c.sql == insert || c.sql == "EXECUTE by_id") << c.sql;
    if (!c.prepared) {
      EXPECT_EQ(c.bound, c.sql);
    }
  }
}

TEST(InterposeLibpq, OffByDefault) {
  std::string program = kPrograms + "/test_libpq_calls";
  if (!fs::exists(program)) GTEST_SKIP() << "built without libpq (no " << program << ")";
  std::string out = fresh_dir("interpose_libpq_off");
  Server server(out);
  if (std::string why = server.start(); !why.empty()) GTEST_SKIP() << why;
  RunResult r =
      run_program({program, server.conninfo(), "5"}, {"SONDE_OUT=" + out, "SONDE_SUMMARY=false"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<std::string> logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 1u);
  CallCollector collector;
  ASSERT_TRUE(format::read_log(logs[0], collector).ok);
  EXPECT_TRUE(collector.calls.empty());
  EXPECT_EQ(read_contents(logs[0]).before, 5 + 3);  // the operations around them are recorded
}

}  // namespace
}  // namespace sonde::test
