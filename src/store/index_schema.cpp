#include "store/index_schema.hpp"

namespace sonde::store {

const std::string& index_schema_sql() {
  // Times are ns since the epoch, durations ns. Traces are stored many to
  // a `trace_batches` row (trace_batch.hpp); trace ids are not unique
  // across monitored processes. `batch_roots` and `batch_id_spans` say
  // which rows a search by root operation or a lookup by id must unpack.
  // The two indexes on trace_batches hold every column a search orders and
  // prunes on (the first also what info() sums), so that those read the
  // indexes alone: a row's own page would bring the start of its BLOBs.
  static const std::string sql = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS names (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS trace_batches (
  id INTEGER PRIMARY KEY,
  traces INTEGER NOT NULL,
  invalid INTEGER NOT NULL,
  valid_executions INTEGER NOT NULL,
  first_start_ns INTEGER NOT NULL,
  last_start_ns INTEGER NOT NULL,
  valid_first_start_ns INTEGER,
  valid_last_start_ns INTEGER,
  min_duration_ns INTEGER NOT NULL,
  max_duration_ns INTEGER NOT NULL,
  min_trace_id INTEGER NOT NULL,
  max_trace_id INTEGER NOT NULL,
  bloom BLOB NOT NULL,
  entries BLOB NOT NULL,
  executions BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS trace_batches_by_start ON trace_batches
  (first_start_ns, last_start_ns, min_duration_ns, max_duration_ns, traces, invalid,
   valid_executions, valid_first_start_ns, valid_last_start_ns);
CREATE INDEX IF NOT EXISTS trace_batches_by_max_duration ON trace_batches
  (max_duration_ns, first_start_ns, last_start_ns, min_duration_ns, traces, invalid);
CREATE TABLE IF NOT EXISTS batch_roots (
  root INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  traces INTEGER NOT NULL,
  invalid INTEGER NOT NULL,
  first_start_ns INTEGER NOT NULL,
  last_start_ns INTEGER NOT NULL,
  min_duration_ns INTEGER NOT NULL,
  max_duration_ns INTEGER NOT NULL,
  PRIMARY KEY (root, batch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS batch_id_spans (
  lo INTEGER NOT NULL,
  hi INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  PRIMARY KEY (lo, batch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hosts (name TEXT PRIMARY KEY) WITHOUT ROWID;
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
CREATE TABLE IF NOT EXISTS operation_state (
  operation TEXT PRIMARY KEY,
  failed INTEGER NOT NULL,
  state BLOB NOT NULL
) WITHOUT ROWID;
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
