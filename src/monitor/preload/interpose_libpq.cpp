// Database calls (probe_database) through PostgreSQL's libpq: PQexec,
// PQexecParams and PQexecPrepared interposed, one DatabaseCall record per
// call, its duration the whole call (the round trip to the server and the
// result transfer, as the program waits for it). The asynchronous API
// (PQsendQuery* / PQgetResult) is not measured. Like SQLite, libsonde-preload
// must precede libpq in the lookup order (docs/probes.md).
#include <cstdlib>
#include <cstring>
#include <string>

#include "monitor/preload/interpose_common.hpp"

extern "C" {
struct pg_conn;
struct pg_result;
}

namespace sonde::preload {
namespace {

using Oid = unsigned int;
using ExecFn = pg_result* (*)(pg_conn*, const char*);
using ExecParamsFn = pg_result* (*)(pg_conn*, const char*, int, const Oid*, const char* const*,
                                    const int*, const int*, int);
using ExecPreparedFn = pg_result* (*)(pg_conn*, const char*, int, const char* const*, const int*,
                                      const int*, int);
using ConnTextFn = char* (*)(const pg_conn*);
using ConnIntFn = int (*)(const pg_conn*);

std::atomic<ExecFn> g_exec{nullptr};
std::atomic<ExecParamsFn> g_exec_params{nullptr};
std::atomic<ExecPreparedFn> g_exec_prepared{nullptr};
std::atomic<ConnTextFn> g_host{nullptr}, g_port{nullptr}, g_db{nullptr};
std::atomic<ConnIntFn> g_server_version{nullptr};

bool probe_on() {
  return g_probe_switches.database.load(std::memory_order_relaxed) != 0 && t_probe_busy == 0 &&
         diagnostics_accepting();
}

std::string conn_text(std::atomic<ConnTextFn>& slot, const char* name, const pg_conn* conn) {
  ConnTextFn f = next_definition(slot, name, ConnTextFn{nullptr});
  const char* s = f != nullptr && conn != nullptr ? f(conn) : nullptr;
  return s != nullptr ? s : "";
}

// One record: `sql` as the program passed it (or "EXECUTE name").
void emit_call(const pg_conn* conn, const std::string& sql, bool prepared, int64_t start_epoch,
               const TracePosition& position, int64_t duration) {
  if (!diagnostics_accepting()) return;
  std::string url = "postgresql://" + conn_text(g_host, "PQhost", conn) + ":" +
                    conn_text(g_port, "PQport", conn) + "/" + conn_text(g_db, "PQdb", conn);
  ConnIntFn version = next_definition(g_server_version, "PQserverVersion", ConnIntFn{nullptr});
  int v = version != nullptr && conn != nullptr ? version(conn) : 0;
  // sql, bound sql (only without parameters), url, product, version.
  std::string text = sql;
  text.push_back('\0');
  if (!prepared) text += sql;
  text.push_back('\0');
  text += url;
  text.push_back('\0');
  text += "PostgreSQL";
  text.push_back('\0');
  if (v > 0) text += std::to_string(v / 10000) + "." + std::to_string(v % 10000);
  text.push_back('\0');
  DiagnosticRecord r;
  r.kind = DiagnosticKind::kDatabaseCall;
  r.timestamp = start_epoch;
  r.position = position;
  r.value0 = duration;
  r.value1 = prepared ? 1 : 0;
  r.text = static_cast<char*>(std::malloc(text.size()));
  if (r.text == nullptr) return;
  std::memcpy(r.text, text.data(), text.size());
  r.text_size = static_cast<uint32_t>(text.size());
  emit_diagnostic(r);
}

// Runs `call` timed and records it.
template <typename Call>
pg_result* measured(const pg_conn* conn, const char* sql, bool prepared, Call call) {
  ProbeBusy busy;
  int64_t start_epoch = epoch_ns_now();
  TracePosition position = current_trace_position();
  int64_t start = monotonic_ns_now();
  pg_result* result = call();
  int64_t duration = monotonic_ns_now() - start;
  emit_call(conn, sql != nullptr ? sql : "", prepared, start_epoch, position, duration);
  return result;
}

}  // namespace
}  // namespace sonde::preload

using namespace sonde::preload;

SONDE_INTERPOSE pg_result* PQexec(pg_conn* conn, const char* query) {
  ExecFn exec = next_definition(g_exec, "PQexec", &PQexec);
  if (exec == nullptr) return nullptr;  // libpq's own answer to an unusable call
  if (!probe_on()) return exec(conn, query);
  return measured(conn, query, false, [&] { return exec(conn, query); });
}

SONDE_INTERPOSE pg_result* PQexecParams(pg_conn* conn, const char* command, int n_params,
                                        const Oid* types, const char* const* values,
                                        const int* lengths, const int* formats, int result_format) {
  ExecParamsFn exec = next_definition(g_exec_params, "PQexecParams", &PQexecParams);
  if (exec == nullptr) return nullptr;
  auto call = [&] {
    return exec(conn, command, n_params, types, values, lengths, formats, result_format);
  };
  if (!probe_on()) return call();
  return measured(conn, command, true, call);
}

SONDE_INTERPOSE pg_result* PQexecPrepared(pg_conn* conn, const char* name, int n_params,
                                          const char* const* values, const int* lengths,
                                          const int* formats, int result_format) {
  ExecPreparedFn exec = next_definition(g_exec_prepared, "PQexecPrepared", &PQexecPrepared);
  if (exec == nullptr) return nullptr;
  auto call = [&] { return exec(conn, name, n_params, values, lengths, formats, result_format); };
  if (!probe_on()) return call();
  // The statement's text is on the server; the name is what the program knows.
  std::string sql = std::string("EXECUTE ") + (name != nullptr ? name : "");
  return measured(conn, sql.c_str(), true, call);
}
