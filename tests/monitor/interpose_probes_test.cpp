// The interposition probes (docs/probes.md) on real programs: lock waits
// counted exactly against contention the program arranges, SQLite
// statement executions counted exactly with their SQL text, nothing when a
// probe is off, and probes switched on at run time through probes_file.
// Expected counts come from the programs' parameters.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "format/callable_schemas.hpp"
#include "format/diagnostic_schemas.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

struct LockWaitCopy {
  int64_t trace_id = 0, order_index = 0, wait = 0, hold = 0;
  std::string lock, operation;
};

struct DbCallCopy {
  int64_t trace_id = 0, order_index = 0, duration = 0;
  bool prepared = false;
  std::string sql, bound, url, product;
};

struct MessageCopy {
  int64_t trace_id = 0, order_index = 0, duration = 0, bytes = 0;
  std::string destination;
};

struct Diagnostics {
  std::vector<LockWaitCopy> lock_waits;
  std::vector<MessageCopy> messages;
  std::vector<DbCallCopy> db_calls;
  format::LogReadStats stats;
};

class DiagnosticCollector final : public format::RecordSink {
 public:
  explicit DiagnosticCollector(Diagnostics& d) : d_(d) {}
  bool on_record(const format::Record& r) override {
    const std::string& cls = r.schema->class_name;
    if (cls == format::diagnostic_class::kLockWait) {
      namespace f = format::lock_field;
      d_.lock_waits.push_back({r.i64(1), r.i64(2), r.i64(f::kWaitDuration), r.i64(f::kHoldDuration),
                               std::string(r.str(f::kLock)), std::string(r.str(f::kOperation))});
    } else if (cls == format::diagnostic_class::kMessageSend) {
      namespace f = format::message_field;
      d_.messages.push_back({r.i64(1), r.i64(2), r.i64(f::kDuration), r.i64(f::kBytes),
                             std::string(r.str(f::kDestination))});
    } else if (cls == format::callable_class::kDatabaseCall) {
      namespace f = format::db_field;
      d_.db_calls.push_back({r.i64(1), r.i64(2), r.i64(f::kDuration), r.flag(f::kPrepared),
                             std::string(r.str(f::kSqlStatement)),
                             std::string(r.str(f::kBoundSqlStatement)),
                             std::string(r.str(f::kDbUrl)), std::string(r.str(f::kDbProductName))});
    }
    return true;
  }

 private:
  Diagnostics& d_;
};

Diagnostics read_diagnostics(const std::string& path) {
  Diagnostics d;
  DiagnosticCollector collector(d);
  d.stats = format::read_log(path, collector);
  return d;
}

// "mutex <pair> <address>" lines the lock program prints.
std::set<std::string> mutex_addresses(const std::string& stderr_text) {
  std::set<std::string> out;
  std::istringstream in(stderr_text);
  std::string word, pair, address;
  while (in >> word) {
    if (word == "mutex" && in >> pair >> address) out.insert(address);
  }
  return out;
}

struct ProgramRun {
  RunResult result;
  LogContents contents;
  Diagnostics diagnostics;
};

ProgramRun run_and_read(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        const std::string& out) {
  ProgramRun run;
  run.result = run_program(argv, env);
  std::vector<std::string> logs = files_with_suffix(out, ".sonde");
  if (logs.size() != 1) {
    ADD_FAILURE() << logs.size() << " logs in " << out << "; stderr: " << run.result.stderr_text;
    return run;
  }
  run.contents = read_contents(logs[0]);
  run.diagnostics = read_diagnostics(logs[0]);
  EXPECT_TRUE(run.diagnostics.stats.ok);
  // The reader knows the record types: nothing skipped, no warnings.
  EXPECT_EQ(run.diagnostics.stats.skipped, 0u);
  EXPECT_TRUE(run.diagnostics.stats.warnings.empty()) << run.diagnostics.stats.warnings.front();
  EXPECT_EQ(run.diagnostics.stats.lost_reported, 0u);
  return run;
}

// Each wait belongs to a trace in the log whose root is the waiting
// operation, right after its enter event (order index 0).
void expect_lock_waits_tied_to_traces(const ProgramRun& run, const std::set<std::string>& addresses,
                                      int rounds_per_mutex) {
  std::map<std::string, int> per_lock;
  for (const LockWaitCopy& w : run.diagnostics.lock_waits) {
    ++per_lock[w.lock];
    EXPECT_EQ(w.operation, "locks.wait");  // the signature its flow records carry
    EXPECT_GE(w.wait, 0);
    EXPECT_EQ(w.hold, -1);
    EXPECT_EQ(w.order_index, 0);
    auto t = run.contents.traces.find(w.trace_id);
    ASSERT_NE(t, run.contents.traces.end()) << "no trace " << w.trace_id;
    ASSERT_FALSE(t->second.events.empty());
    EXPECT_EQ(t->second.events[0].operation, w.operation);
  }
  for (const std::string& a : addresses) {
    EXPECT_EQ(per_lock[a], rounds_per_mutex) << "mutex " << a;
  }
  EXPECT_EQ(per_lock.size(), addresses.size()) << "waits on locks the program did not contend";
}

TEST(InterposeLockWait, OneRecordPerContendedAcquisitionNoneForUncontended) {
  std::string out = fresh_dir("interpose_lock_exact");
  const int pairs = 3, rounds = 150;
  ProgramRun run = run_and_read(
      {kPrograms + "/test_lock_contention", std::to_string(pairs), std::to_string(rounds)},
      env_for(out, {"SONDE_PROBE_LOCK_WAIT=true"}), out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  std::set<std::string> addresses = mutex_addresses(run.result.stderr_text);
  ASSERT_EQ(addresses.size(), static_cast<size_t>(pairs));
  // Holders, waiters and the private mutexes take 2 * pairs * rounds
  // uncontended locks besides; they must leave no record.
  EXPECT_EQ(run.diagnostics.lock_waits.size(), static_cast<size_t>(pairs * rounds));
  expect_lock_waits_tied_to_traces(run, addresses, rounds);
}

TEST(InterposeLockWait, OffByDefault) {
  std::string out = fresh_dir("interpose_lock_off");
  ProgramRun run =
      run_and_read({kPrograms + "/test_lock_contention", "2", "50"}, env_for(out), out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  EXPECT_TRUE(run.diagnostics.lock_waits.empty());
  EXPECT_EQ(run.contents.records_by_class.count(std::string(format::diagnostic_class::kLockWait)),
            0u);
  // The program ran monitored all the same: 2 pairs * 50 rounds of waits.
  EXPECT_GE(run.contents.before, 2 * 50);
}

TEST(InterposeLockWait, ThresholdDropsShorterWaits) {
  // The holder releases as soon as the waiter blocks: no wait comes near 4 s.
  std::string out = fresh_dir("interpose_lock_threshold");
  ProgramRun run = run_and_read(
      {kPrograms + "/test_lock_contention", "2", "50"},
      env_for(out, {"SONDE_PROBE_LOCK_WAIT=true", "SONDE_PROBE_LOCK_WAIT_THRESHOLD_NS=4000000000"}),
      out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  EXPECT_TRUE(run.diagnostics.lock_waits.empty());
}

TEST(InterposeLockWait, SwitchedOnAtRunTimeThroughProbesFile) {
  std::string out = fresh_dir("interpose_lock_reload");
  const int pairs = 2, rounds = 60;
  ProgramRun run = run_and_read(
      {kPrograms + "/test_lock_contention", std::to_string(pairs), std::to_string(rounds),
       "reload"},
      env_for(out, {"SONDE_PROBES_FILE=" + out + "/probes.conf", "SONDE_PATTERNS_RELOAD_MS=20"}),
      out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  // Both halves contend pairs * rounds times; only the second is recorded.
  EXPECT_EQ(run.diagnostics.lock_waits.size(), static_cast<size_t>(pairs * rounds));
  expect_lock_waits_tied_to_traces(run, mutex_addresses(run.result.stderr_text), rounds);
}

TEST(InterposeProbesFile, NonProbeKeyAtStartDisablesMonitoringNamingIt) {
  std::string out = fresh_dir("interpose_bad_probes_file");
  std::string file = out + "/probes.conf";
  { std::ofstream(file) << "probe_lock_wait = on\nwriter = null\n"; }
  RunResult r = run_program({kPrograms + "/test_lock_contention", "1", "5"},
                            env_for(out, {"SONDE_PROBES_FILE=" + file}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("monitoring disabled"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(file + ":2"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("only probe_* keys"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(files_with_suffix(out, ".sonde").empty());
}

// ---------------------------------------------------------------------------
// SQLite.

std::string insert_sql = "INSERT INTO items(name) VALUES (?1)";

std::string bound_insert(int i) {
  return "INSERT INTO items(name) VALUES ('item-" + std::to_string(i) + "')";
}

TEST(InterposeSqlite, OneRecordPerStatementExecutionWithItsSql) {
  std::string out = fresh_dir("interpose_sqlite_exact");
  std::string db = out + "/shop.db";
  const int inserts = 25;
  ProgramRun run = run_and_read({kPrograms + "/test_sqlite_calls", db, std::to_string(inserts)},
                                env_for(out, {"SONDE_PROBE_DATABASE=true"}), out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  // No warning that the program's calls bypass libsonde.
  EXPECT_EQ(run.result.stderr_text.find("probe_database"), std::string::npos)
      << run.result.stderr_text;
  const std::vector<DbCallCopy>& calls = run.diagnostics.db_calls;
  ASSERT_EQ(calls.size(), static_cast<size_t>(inserts + 4));
  std::map<std::string, int> by_sql;
  std::set<std::string> bound_inserts;
  std::map<std::string, std::string> operation_of_sql;
  for (const DbCallCopy& c : calls) {
    ++by_sql[c.sql];
    EXPECT_GE(c.duration, 0);
    EXPECT_EQ(c.url, db);
    EXPECT_EQ(c.product, "SQLite");
    EXPECT_EQ(c.order_index, 0) << c.sql;
    auto t = run.contents.traces.find(c.trace_id);
    ASSERT_NE(t, run.contents.traces.end()) << c.sql;
    ASSERT_FALSE(t->second.events.empty());
    operation_of_sql[c.sql] = t->second.events[0].operation;
    if (c.sql == insert_sql) {
      EXPECT_TRUE(c.prepared);
      bound_inserts.insert(c.bound);
    }
  }
  EXPECT_EQ(by_sql["CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)"], 1);
  EXPECT_EQ(by_sql[insert_sql], inserts);
  EXPECT_EQ(by_sql["SELECT id, name FROM items ORDER BY id"], 1);
  EXPECT_EQ(by_sql["SELECT name FROM items WHERE id > ?1"], 1);
  EXPECT_EQ(by_sql["SELECT count(*) FROM items"], 1);
  EXPECT_EQ(by_sql.size(), 5u);
  std::set<std::string> expected_bound;
  for (int i = 0; i < inserts; ++i) expected_bound.insert(bound_insert(i));
  EXPECT_EQ(bound_inserts, expected_bound);
  EXPECT_EQ(operation_of_sql["CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)"], "db.setup");
  EXPECT_EQ(operation_of_sql[insert_sql], "db.insert");
  EXPECT_EQ(operation_of_sql["SELECT id, name FROM items ORDER BY id"], "db.scan");
  EXPECT_EQ(operation_of_sql["SELECT name FROM items WHERE id > ?1"], "db.first");
  EXPECT_EQ(operation_of_sql["SELECT count(*) FROM items"], "db.count");
  for (const DbCallCopy& c : calls) {
    if (c.sql.rfind("SELECT count", 0) == 0 || c.sql.rfind("CREATE", 0) == 0) {
      EXPECT_FALSE(c.prepared) << c.sql;  // sqlite3_exec
    }
  }
}

TEST(InterposeSqlite, OffByDefault) {
  std::string out = fresh_dir("interpose_sqlite_off");
  ProgramRun run =
      run_and_read({kPrograms + "/test_sqlite_calls", out + "/shop.db", "10"}, env_for(out), out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  EXPECT_TRUE(run.diagnostics.db_calls.empty());
  EXPECT_EQ(run.contents.before, 10 + 4);  // the operations around them are recorded
}

TEST(InterposeSqlite, SwitchedOnAtRunTimeThroughProbesFile) {
  std::string out = fresh_dir("interpose_sqlite_reload");
  const int inserts = 12;
  ProgramRun run = run_and_read(
      {kPrograms + "/test_sqlite_calls", out + "/shop.db", std::to_string(inserts), "reload"},
      env_for(out, {"SONDE_PROBES_FILE=" + out + "/probes.conf", "SONDE_PATTERNS_RELOAD_MS=20"}),
      out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  ASSERT_EQ(run.diagnostics.db_calls.size(), static_cast<size_t>(inserts));
  std::set<std::string> bound, expected;
  for (const DbCallCopy& c : run.diagnostics.db_calls) {
    EXPECT_EQ(c.sql, insert_sql);
    bound.insert(c.bound);
  }
  for (int i = inserts; i < 2 * inserts; ++i) expected.insert(bound_insert(i));
  EXPECT_EQ(bound, expected);
}

// ---------------------------------------------------------------------------
// Records the program reports itself (sonde/records.h).

TEST(ProbeRecordsApi, MessageSendsAndDatabaseCallsWithTheirValues) {
  std::string out = fresh_dir("probe_records_api");
  const int sends = 30, calls = 7;
  ProgramRun run = run_and_read(
      {kPrograms + "/test_probe_records", std::to_string(sends), std::to_string(calls)},
      env_for(out, {"SONDE_PROBE_MESSAGING=true", "SONDE_PROBE_DATABASE=on"}), out);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  ASSERT_EQ(run.diagnostics.messages.size(), static_cast<size_t>(sends + 1));
  std::map<std::string, int> per_queue;
  int64_t bytes = 0, duration = 0;
  for (const MessageCopy& m : run.diagnostics.messages) {
    ++per_queue[m.destination];
    if (m.destination == "orphan") {
      EXPECT_EQ(m.trace_id, -1);
      EXPECT_EQ(m.order_index, -1);
      EXPECT_EQ(m.duration, -1);
      continue;
    }
    bytes += m.bytes;
    duration += m.duration;
    auto t = run.contents.traces.find(m.trace_id);
    ASSERT_NE(t, run.contents.traces.end());
    EXPECT_EQ(t->second.events.at(0).operation, "shop.publish");
    EXPECT_EQ(m.order_index, 0);
  }
  EXPECT_EQ(per_queue["queue-0"], 10);
  EXPECT_EQ(per_queue["queue-1"], 10);
  EXPECT_EQ(per_queue["queue-2"], 10);
  EXPECT_EQ(per_queue["orphan"], 1);
  // Sum of 100 + i and 1000 + i for i < 30.
  EXPECT_EQ(bytes, 100 * sends + sends * (sends - 1) / 2);
  EXPECT_EQ(duration, 1000 * sends + sends * (sends - 1) / 2);
  ASSERT_EQ(run.diagnostics.db_calls.size(), static_cast<size_t>(calls));
  std::set<std::string> sql;
  for (const DbCallCopy& c : run.diagnostics.db_calls) {
    sql.insert(c.sql);
    EXPECT_EQ(c.duration, 500);
    EXPECT_FALSE(c.prepared);
  }
  EXPECT_EQ(sql.size(), static_cast<size_t>(calls));
  EXPECT_EQ(sql.count("SELECT 6"), 1u);
}

TEST(ProbeRecordsApi, EachKindOnlyWhileItsProbeIsOn) {
  std::string out = fresh_dir("probe_records_api_off");
  ProgramRun off = run_and_read({kPrograms + "/test_probe_records", "5", "5"}, env_for(out), out);
  ASSERT_EQ(off.result.exit_code, 0) << off.result.stderr_text;
  EXPECT_TRUE(off.diagnostics.messages.empty());
  EXPECT_TRUE(off.diagnostics.db_calls.empty());
  out = fresh_dir("probe_records_api_messaging_only");
  ProgramRun messaging = run_and_read({kPrograms + "/test_probe_records", "5", "5"},
                                      env_for(out, {"SONDE_PROBE_MESSAGING=true"}), out);
  ASSERT_EQ(messaging.result.exit_code, 0) << messaging.result.stderr_text;
  EXPECT_EQ(messaging.diagnostics.messages.size(), 6u);
  EXPECT_TRUE(messaging.diagnostics.db_calls.empty());
}

}  // namespace
}  // namespace sonde::test
