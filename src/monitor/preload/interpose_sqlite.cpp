// Database calls (probe_database): SQLite's sqlite3_step, sqlite3_reset,
// sqlite3_finalize and sqlite3_exec interposed. One DatabaseCall record per
// statement execution: from its first sqlite3_step to the step that ends it
// (SQLITE_DONE or an error), or to the reset/finalize that abandons it.
// Its duration is the time spent inside sqlite3_step (the database's time,
// not the program's between rows); its SQL is sqlite3_sql (as written) and
// sqlite3_expanded_sql (with the bound values). sqlite3_exec gives one
// record for its whole SQL string. libsonde-preload must precede libsqlite3
// in the lookup order (link it first, or LD_PRELOAD it): see docs/probes.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "monitor/preload/interpose_common.hpp"

extern "C" {
struct sqlite3;
struct sqlite3_stmt;
}

namespace sonde::preload {
namespace {

constexpr int kSqliteRow = 100;
constexpr int kSqliteMisuse = 21;

using StepFn = int (*)(sqlite3_stmt*);
using ExecFn = int (*)(sqlite3*, const char*, int (*)(void*, int, char**, char**), void*, char**);
using SqlFn = const char* (*)(sqlite3_stmt*);
using ExpandedFn = char* (*)(sqlite3_stmt*);
using FreeFn = void (*)(void*);
using DbHandleFn = sqlite3* (*)(sqlite3_stmt*);
using DbFilenameFn = const char* (*)(sqlite3*, const char*);
using VersionFn = const char* (*)();
using BusyFn = int (*)(sqlite3_stmt*);

std::atomic<StepFn> g_step{nullptr}, g_reset{nullptr}, g_finalize{nullptr};
std::atomic<ExecFn> g_exec{nullptr};
std::atomic<SqlFn> g_sql{nullptr};
std::atomic<ExpandedFn> g_expanded{nullptr};
std::atomic<FreeFn> g_free{nullptr};
std::atomic<DbHandleFn> g_db_handle{nullptr};
std::atomic<DbFilenameFn> g_db_filename{nullptr};
std::atomic<VersionFn> g_version{nullptr};
std::atomic<BusyFn> g_busy{nullptr};

// Statements this thread has started and not finished. Few are interleaved
// on one thread at a time; when more are, the oldest is recorded early.
struct Active {
  sqlite3_stmt* stmt;
  int64_t start_epoch;
  int64_t step_ns;
  // TracePosition's fields: a __thread array needs a trivial type.
  int64_t trace_id;
  int32_t order_index;
  uint64_t operation_key;
};
constexpr int kMaxActive = 8;
__thread Active t_active[kMaxActive] __attribute__((tls_model("initial-exec")));
__thread uint8_t t_active_count __attribute__((tls_model("initial-exec")));

void append(std::string& text, const char* s) {
  if (s != nullptr) text += s;
  text.push_back('\0');
}

// Writes the record for `a` while its statement is still valid.
void emit_execution(const Active& a) {
  if (!diagnostics_accepting()) return;
  SqlFn sql = next_definition(g_sql, "sqlite3_sql", SqlFn{nullptr});
  ExpandedFn expanded = next_definition(g_expanded, "sqlite3_expanded_sql", ExpandedFn{nullptr});
  FreeFn sqlite_free = next_definition(g_free, "sqlite3_free", FreeFn{nullptr});
  DbHandleFn db_handle = next_definition(g_db_handle, "sqlite3_db_handle", DbHandleFn{nullptr});
  DbFilenameFn db_filename =
      next_definition(g_db_filename, "sqlite3_db_filename", DbFilenameFn{nullptr});
  VersionFn version = next_definition(g_version, "sqlite3_libversion", VersionFn{nullptr});
  std::string text;
  append(text, sql != nullptr ? sql(a.stmt) : nullptr);
  char* bound = expanded != nullptr ? expanded(a.stmt) : nullptr;
  append(text, bound);
  if (bound != nullptr && sqlite_free != nullptr) sqlite_free(bound);
  sqlite3* db = db_handle != nullptr ? db_handle(a.stmt) : nullptr;
  append(text, db != nullptr && db_filename != nullptr ? db_filename(db, "main") : nullptr);
  append(text, "SQLite");
  append(text, version != nullptr ? version() : nullptr);
  DiagnosticRecord r;
  r.kind = DiagnosticKind::kDatabaseCall;
  r.timestamp = a.start_epoch;
  r.position.trace_id = a.trace_id;
  r.position.order_index = a.order_index;
  r.position.operation_key = a.operation_key;
  r.value0 = a.step_ns;
  r.value1 = 1;  // prepared
  r.text = static_cast<char*>(std::malloc(text.size()));
  if (r.text == nullptr) return;
  std::memcpy(r.text, text.data(), text.size());
  r.text_size = static_cast<uint32_t>(text.size());
  emit_diagnostic(r);
}

int find_active(sqlite3_stmt* stmt) {
  for (int i = 0; i < t_active_count; ++i) {
    if (t_active[i].stmt == stmt) return i;
  }
  return -1;
}

void remove_active(int i) {
  t_active[i] = t_active[t_active_count - 1];
  --t_active_count;
}

// Records and forgets `stmt`'s execution if this thread has one open.
void finish_active(sqlite3_stmt* stmt) {
  if (t_active_count == 0) return;
  int i = find_active(stmt);
  if (i < 0) return;
  emit_execution(t_active[i]);
  remove_active(i);
}

[[gnu::noinline]] int probed_step(sqlite3_stmt* stmt, StepFn step) {
  ProbeBusy busy;  // SQLite's own mutexes and nested calls pass straight through
  BusyFn stmt_busy = next_definition(g_busy, "sqlite3_stmt_busy", BusyFn{nullptr});
  bool continuing = stmt_busy != nullptr && stmt_busy(stmt) != 0;
  int i = find_active(stmt);
  if (i >= 0 && !continuing) {
    // Reset by a path we do not see (e.g. sqlite3_clear_bindings does not
    // reset; an automatic reset does): the earlier execution is over.
    emit_execution(t_active[i]);
    remove_active(i);
    i = -1;
  }
  if (i < 0) {
    if (t_active_count == kMaxActive) {
      emit_execution(t_active[0]);
      remove_active(0);
    }
    i = t_active_count++;
    TracePosition p = current_trace_position();
    t_active[i] = Active{stmt, epoch_ns_now(), 0, p.trace_id, p.order_index, p.operation_key};
  }
  int64_t start = monotonic_ns_now();
  int rc = step(stmt);
  t_active[i].step_ns += monotonic_ns_now() - start;
  if (rc != kSqliteRow) {
    emit_execution(t_active[i]);
    remove_active(i);
  }
  return rc;
}

bool probe_on() {
  return g_probe_switches.database.load(std::memory_order_relaxed) != 0 && t_probe_busy == 0;
}

}  // namespace
}  // namespace sonde::preload

using namespace sonde::preload;

SONDE_INTERPOSE int sqlite3_step(sqlite3_stmt* stmt) {
  StepFn step = next_definition(g_step, "sqlite3_step", &sqlite3_step);
  if (step == nullptr) return kSqliteMisuse;
  if (!probe_on() || !diagnostics_accepting()) return step(stmt);
  return probed_step(stmt, step);
}

SONDE_INTERPOSE int sqlite3_reset(sqlite3_stmt* stmt) {
  StepFn reset = next_definition(g_reset, "sqlite3_reset", &sqlite3_reset);
  if (reset == nullptr) return kSqliteMisuse;
  if (t_active_count != 0 && t_probe_busy == 0) {
    ProbeBusy busy;
    finish_active(stmt);
  }
  return reset(stmt);
}

SONDE_INTERPOSE int sqlite3_finalize(sqlite3_stmt* stmt) {
  StepFn finalize = next_definition(g_finalize, "sqlite3_finalize", &sqlite3_finalize);
  if (finalize == nullptr) return kSqliteMisuse;
  if (t_active_count != 0 && t_probe_busy == 0) {
    ProbeBusy busy;
    finish_active(stmt);
  }
  return finalize(stmt);
}

SONDE_INTERPOSE int sqlite3_exec(sqlite3* db, const char* sql,
                                 int (*callback)(void*, int, char**, char**), void* arg,
                                 char** errmsg) {
  ExecFn exec = next_definition(g_exec, "sqlite3_exec", &sqlite3_exec);
  if (exec == nullptr) return kSqliteMisuse;
  if (!probe_on() || !diagnostics_accepting()) return exec(db, sql, callback, arg, errmsg);
  ProbeBusy busy;  // the statements exec steps internally are part of this record
  int64_t start_epoch = epoch_ns_now();
  TracePosition position = current_trace_position();
  int64_t start = monotonic_ns_now();
  int rc = exec(db, sql, callback, arg, errmsg);
  int64_t duration = monotonic_ns_now() - start;
  if (!diagnostics_accepting()) return rc;
  DbFilenameFn db_filename =
      next_definition(g_db_filename, "sqlite3_db_filename", DbFilenameFn{nullptr});
  VersionFn version = next_definition(g_version, "sqlite3_libversion", VersionFn{nullptr});
  std::string text;
  append(text, sql);
  append(text, sql);  // no bindings: the bound statement is the statement
  append(text, db != nullptr && db_filename != nullptr ? db_filename(db, "main") : nullptr);
  append(text, "SQLite");
  append(text, version != nullptr ? version() : nullptr);
  DiagnosticRecord r;
  r.kind = DiagnosticKind::kDatabaseCall;
  r.timestamp = start_epoch;
  r.position = position;
  r.value0 = duration;
  r.value1 = 0;  // not prepared by the program
  r.text = static_cast<char*>(std::malloc(text.size()));
  if (r.text != nullptr) {
    std::memcpy(r.text, text.data(), text.size());
    r.text_size = static_cast<uint32_t>(text.size());
    emit_diagnostic(r);
  }
  return rc;
}
