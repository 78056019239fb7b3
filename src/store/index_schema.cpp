#include "store/index_schema.hpp"

namespace sonde::store {

const std::string& index_schema_sql() {
  // Times are ns since the epoch, durations ns. `traces.id` is the row id:
  // trace ids are not unique across monitored processes.
  static const std::string sql = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS traces (
  id INTEGER PRIMARY KEY,
  trace_id INTEGER NOT NULL,
  root_operation TEXT NOT NULL,
  start_ns INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  host TEXT NOT NULL,
  thread_id INTEGER NOT NULL,
  parent_trace_id INTEGER NOT NULL,
  executions INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  valid INTEGER NOT NULL,
  problem TEXT NOT NULL,
  client INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_by_start ON traces (start_ns, trace_id);
CREATE INDEX IF NOT EXISTS traces_by_duration ON traces (duration_ns, trace_id);
CREATE INDEX IF NOT EXISTS traces_by_trace_id ON traces (trace_id);
CREATE INDEX IF NOT EXISTS traces_by_host ON traces (host, start_ns);
CREATE TABLE IF NOT EXISTS names (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS trace_executions (
  trace INTEGER PRIMARY KEY REFERENCES traces (id),
  data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS reduced_traces (
  id INTEGER PRIMARY KEY,
  first_trace_id INTEGER NOT NULL,
  root_operation TEXT NOT NULL,
  host TEXT NOT NULL,
  first_start_ns INTEGER NOT NULL,
  last_start_ns INTEGER NOT NULL,
  traces INTEGER NOT NULL,
  failed_traces INTEGER NOT NULL,
  mean_ns REAL NOT NULL,
  min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL,
  client INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS reduced_by_start ON reduced_traces (first_start_ns);
CREATE TABLE IF NOT EXISTS operations (
  operation TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  total INTEGER NOT NULL,
  mean REAL NOT NULL,
  min INTEGER NOT NULL,
  max INTEGER NOT NULL,
  p50 REAL NOT NULL,
  p90 REAL NOT NULL,
  p95 REAL NOT NULL,
  p99 REAL NOT NULL,
  exact_quantiles INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS call_edges (
  caller TEXT NOT NULL,
  callee TEXT NOT NULL,
  calls INTEGER NOT NULL,
  PRIMARY KEY (caller, callee)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS clients (
  id INTEGER PRIMARY KEY,
  peer TEXT NOT NULL,
  log_file TEXT NOT NULL,
  received INTEGER NOT NULL,
  stored INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  undecoded_bytes INTEGER NOT NULL,
  error TEXT NOT NULL
);
)";
  return sql;
}

}  // namespace sonde::store
