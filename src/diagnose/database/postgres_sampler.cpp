#include "diagnose/database/postgres_sampler.hpp"

#include <libpq-fe.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace sonde::diagnose::database {
namespace {

std::int64_t epoch_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// utime + stime of `pid` in seconds, or -1 if /proc does not show it.
double process_cpu_s(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // The command name (field 2) may contain spaces; fields count from its ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i == 14 || i == 15) ticks += std::strtod(field.c_str(), nullptr);
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// One round trip: every other backend, its state and the lock it waits
// for (a backend waits for at most one lock), and the database's
// transaction counter.
constexpr const char* kSampleQuery =
    "SELECT a.pid, coalesce(a.state, ''), coalesce(a.wait_event_type, ''), "
    "coalesce(l.relation::regclass::text, l.locktype, a.wait_event, ''), "
    "(SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = "
    "current_database()) "
    "FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted "
    "WHERE a.pid <> pg_backend_pid()";

}  // namespace

PostgresSampler::PostgresSampler(std::string conninfo, int interval_ms)
    : conninfo_(std::move(conninfo)), interval_ms_(interval_ms) {}

PostgresSampler::~PostgresSampler() { stop(); }

void PostgresSampler::start() {
  PGconn* c = PQconnectdb(conninfo_.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    error_ = "cannot connect to PostgreSQL (" + conninfo_ +
             "): " + (c != nullptr ? PQerrorMessage(c) : "out of memory");
    while (!error_.empty() && error_.back() == '\n') error_.pop_back();
    PQfinish(c);
    return;
  }
  // The server's CPU is read from /proc, so its processes must be this
  // machine's: our own backend must be a local postgres process. (A
  // server elsewhere could have pids that match unrelated local ones.)
  const int backend = PQbackendPID(c);
  std::ifstream comm("/proc/" + std::to_string(backend) + "/comm");
  std::string name;
  if (!std::getline(comm, name) || name.rfind("postgres", 0) != 0)
    cpu_error_ = "the server's processes are not visible on this machine (backend pid " +
                 std::to_string(backend) + " is not a local postgres process)";
  thread_ = std::thread([this, c] {
    loop(c);
    PQfinish(c);
  });
}

void PostgresSampler::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void PostgresSampler::loop(void* connection) {
  while (!stopping_) {
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(interval_ms_);
    if (!sample_once(connection)) return;
    while (!stopping_ && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool PostgresSampler::sample_once(void* connection) {
  PGconn* c = static_cast<PGconn*>(connection);
  PGresult* r = PQexec(c, kSampleQuery);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    error_ = std::string("PostgreSQL sampling query failed: ") + PQerrorMessage(c);
    while (!error_.empty() && error_.back() == '\n') error_.pop_back();
    PQclear(r);
    return false;
  }
  const std::int64_t now = epoch_ns();
  std::map<int, double> cpu_now;
  std::map<std::string, int> waiting;
  std::set<int> seen;
  int active = 0;
  double transactions = -1;
  int visible = 0;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int row = 0; row < PQntuples(r); ++row) {
    const int pid = std::atoi(PQgetvalue(r, row, 0));
    if (!PQgetisnull(r, row, 4)) transactions = std::strtod(PQgetvalue(r, row, 4), nullptr);
    if (!seen.insert(pid).second) continue;
    if (std::string(PQgetvalue(r, row, 1)) == "active") ++active;
    if (std::string(PQgetvalue(r, row, 2)) == "Lock") ++waiting[PQgetvalue(r, row, 3)];
    if (!cpu_error_.empty()) continue;
    const double cpu = process_cpu_s(pid);
    if (cpu >= 0) cpu_now[pid] = cpu, ++visible;
    cpu_set_t affinity;
    CPU_ZERO(&affinity);
    if (::sched_getaffinity(pid, sizeof affinity, &affinity) == 0) CPU_OR(&cpus, &cpus, &affinity);
  }
  PQclear(r);
  cpus_ = std::max(cpus_, CPU_COUNT(&cpus));
  if (!seen.empty() && visible == 0 && cpu_error_.empty())
    cpu_error_ = "the server's processes are not visible in /proc (a server on another machine?)";
  if (!first_) {
    // A process that started since the last sample used all its CPU time
    // since; one that ended took its last interval's time with it.
    double used = 0;
    for (const auto& [pid, cpu] : cpu_now) {
      const auto before = last_cpu_s_.find(pid);
      used += before == last_cpu_s_.end() ? cpu : cpu - before->second;
    }
    if (cpu_error_.empty()) samples_.push_back({now, "", "cpu_s", "", used});
    if (transactions >= 0 && last_transactions_ >= 0)
      samples_.push_back({now, "", "transactions", "", transactions - last_transactions_});
  }
  samples_.push_back({now, "", "active", "", static_cast<double>(active)});
  for (const auto& [key, n] : waiting) lock_keys_[key] = true;
  for (const auto& [key, known] : lock_keys_) {
    const auto w = waiting.find(key);
    samples_.push_back({now, "", "lock_waiting", key, w == waiting.end() ? 0.0 : w->second});
  }
  last_cpu_s_ = std::move(cpu_now);
  if (transactions >= 0) last_transactions_ = transactions;
  first_ = false;
  return true;
}

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void write_samples_csv(const std::string& path, const std::string& source,
                       const std::vector<Sample>& samples, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!append) out << "time_ns,source,metric,key,value\n";
  for (const Sample& s : samples)
    out << s.time_ns << "," << source << "," << s.metric << "," << csv_field(s.key) << ","
        << s.value << "\n";
}

}  // namespace sonde::diagnose::database
