#include "store/clickhouse_writer.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "analysis/reconstruct/trace_catalog.hpp"

namespace sonde::store {

namespace {

// Ordered by what the UI asks most: a time range of traces, a trace's
// executions, an operation's executions.
const char* kTracesTable = R"(CREATE TABLE IF NOT EXISTS traces (
  id UInt64, trace_id Int64, root_operation String, start_ns Int64, duration_ns Int64,
  host String, thread_id Int64, parent_trace_id Int64, executions UInt32, failed UInt32,
  valid UInt8, problem String, client Int64
) ENGINE = MergeTree() ORDER BY (start_ns, trace_id, id))";

const char* kExecutionsTable = R"(CREATE TABLE IF NOT EXISTS executions (
  trace UInt64, trace_id Int64, seq UInt32, eoi Int32, ess Int32, operation String,
  component String, host String, tin Int64, tout Int64, failed UInt8, cause String,
  valid UInt8, caller String
) ENGINE = MergeTree() ORDER BY (trace_id, trace, seq))";

// Tables that materialized views keep from every insert into `executions`
// or `traces`, so that the UI's summaries and searches need no scan of
// them.
struct Summary {
  const char* name;
  const char* table;   // CREATE TABLE
  std::string select;  // the view's query with `tail`, also the fill of an older database
  std::string tail;    // its GROUP BY, if any: a fill in slices puts a WHERE before it
  // A summary of `traces` (select ends "FROM traces"): the searches rely on
  // it holding every trace, so it is marked complete once filled, and an
  // older database's fill goes in slices of start time (create_summaries).
  bool of_traces;
};

// The bucket of DurationAccumulator's log-linear histogram (values below
// 256 their own bucket, then 128 per power of two) for the duration `d`
// (an SQL expression): analysis::bucket_of's for durations below 2^53 ns
// (104 days; log2 in double precision).
std::string duration_bucket_sql(const std::string& d) {
  const std::string at_least_256 = "greatest(" + d + ", 256)";
  const std::string log2 = "floor(log2(" + at_least_256 + "))";
  return "if(" + d + " < 256, toUInt32(greatest(" + d + ", 0)), toUInt32(256 + (toInt64(" + log2 +
         ") - 8) * 128 + toInt64(bitShiftRight(toUInt64(" + at_least_256 + "), toUInt64(" + log2 +
         " - 7))) - 128))";
}

const Summary kSummaries[] = {
    // The dependency graph: calls per (caller, callee). Counting them from
    // `executions` took a full scan (1.0 s at 10^7 executions on two cores,
    // Debian's clickhouse-server 18.16; docs/PERFORMANCE.md). Rows of one
    // key are summed when parts merge; readers sum them again.
    {"call_edges", R"(CREATE TABLE IF NOT EXISTS call_edges (
  caller String, operation String, calls UInt64
) ENGINE = SummingMergeTree() ORDER BY (caller, operation))",
     "SELECT caller, operation, count() AS calls FROM executions WHERE valid = 1 "
     "GROUP BY caller, operation",
     "", false},
    // Per operation and duration bucket (duration_bucket_sql): count,
    // failed, total, min and max. The operation statistics come from it in
    // stores too large to sort every duration (3.9 s at 10^7 executions).
    {"operation_buckets", R"(CREATE TABLE IF NOT EXISTS operation_buckets (
  operation String, bucket UInt32, n AggregateFunction(count), failed AggregateFunction(sum, UInt64),
  total AggregateFunction(sum, Int64), mn AggregateFunction(min, Int64),
  mx AggregateFunction(max, Int64)
) ENGINE = AggregatingMergeTree() ORDER BY (operation, bucket))",
     "SELECT operation, " + duration_bucket_sql("tout - tin") +
         " AS bucket, countState() AS n, sumState(toUInt64(failed)) AS failed, sumState(tout - "
         "tin) AS total, "
         "minState(tout - tin) AS mn, maxState(tout - tin) AS mx "
         "FROM executions WHERE valid = 1 GROUP BY operation, bucket",
     "", false},
    // Traces per start-time bucket (kTraceBucketShift), validity, root
    // operation and host, with the first and last start in each: a search
    // by start time reads the traces of the first buckets that hold its
    // page instead of every row, and counts its matches here (exactly when
    // its filters are these columns, by sample otherwise); the store's
    // totals, time bounds and hosts come from it too. Searching the whole
    // traces table took 0.4-0.7 s p95 at 10^7 records, growing with it
    // (docs/PERFORMANCE.md).
    {"trace_buckets", R"(CREATE TABLE IF NOT EXISTS trace_buckets (
  bucket Int64, valid UInt8, root_operation String, host String, traces AggregateFunction(count),
  first AggregateFunction(min, Int64), last AggregateFunction(max, Int64)
) ENGINE = AggregatingMergeTree() ORDER BY (bucket, valid, root_operation, host))",
     "SELECT bitShiftRight(start_ns, " + std::to_string(kTraceBucketShift) +
         ") AS bucket, valid, root_operation, host, "
         "countState() AS traces, minState(start_ns) AS first, maxState(start_ns) AS last "
         "FROM traces",
     " GROUP BY bucket, valid, root_operation, host", true},
    // Traces per duration bucket (duration_bucket_sql), validity, root
    // operation and host: a search longest first learns from it the
    // duration its page starts above and reads only the rows past it
    // (clickhouse_search.cpp); sorting every row took 4.1 s p95 at 10^8
    // records.
    {"trace_durations", R"(CREATE TABLE IF NOT EXISTS trace_durations (
  valid UInt8, root_operation String, host String, bucket UInt32, traces UInt64
) ENGINE = SummingMergeTree() ORDER BY (valid, root_operation, host, bucket))",
     "SELECT valid, root_operation, host, " + duration_bucket_sql("duration_ns") +
         " AS bucket, count() AS traces FROM traces",
     " GROUP BY valid, root_operation, host, bucket", true},
    // The trace rows again, ordered by duration: a search longest first
    // reads, through the primary key, only the granules above the duration
    // its page starts at (trace_durations tells which). In `traces`,
    // ordered by start time, the page's rows lie scattered, and ClickHouse
    // read every granule holding one: 2.8 s p95 at 10^8 records
    // (docs/PERFORMANCE.md). The columns a page shows and its filters
    // check; it costs about as much disk as the trace rows.
    {"traces_by_duration", R"(CREATE TABLE IF NOT EXISTS traces_by_duration (
  id UInt64, trace_id Int64, root_operation String, start_ns Int64, duration_ns Int64,
  host String, thread_id Int64, parent_trace_id Int64, executions UInt32, failed UInt32,
  valid UInt8, problem String
) ENGINE = MergeTree() ORDER BY (duration_ns, trace_id, id))",
     "SELECT id, trace_id, root_operation, start_ns, duration_ns, host, thread_id, "
     "parent_trace_id, executions, failed, valid, problem FROM traces",
     "", true},
};

// Summaries the searches rely on being whole (create_summaries).
const char* kFilledTable =
    "CREATE TABLE IF NOT EXISTS summaries_filled (name String) ENGINE = MergeTree() ORDER BY name";

std::string view_sql(const Summary& s) {
  return std::string("CREATE MATERIALIZED VIEW IF NOT EXISTS ") + s.name + "_mv TO " + s.name +
         " AS " + s.select + s.tail;
}

template <typename T>
void field(std::string& out, T value) {
  out += std::to_string(value);
  out += '\t';
}
void field(std::string& out, std::string_view text) {
  ClickHouseClient::append_field(out, text);
  out += '\t';
}
void end_row(std::string& out) { out.back() = '\n'; }

}  // namespace

std::string clickhouse_schema_sql(const std::string& database) {
  std::string sql = "CREATE DATABASE IF NOT EXISTS " + database + ";\n" + kTracesTable + ";\n" +
                    kExecutionsTable + ";\n";
  sql += std::string(kFilledTable) + ";\n";
  for (const Summary& s : kSummaries) {
    sql += std::string(s.table) + ";\n" + view_sql(s) + ";\n";
    if (s.of_traces)
      sql += std::string("INSERT INTO summaries_filled VALUES ('") + s.name + "');\n";
  }
  return sql;
}

ClickHouseWriter::ClickHouseWriter(ClickHouseUrl url, size_t batch_traces, uint32_t collector_id)
    : client_(std::move(url)), batch_traces_(batch_traces), collector_id_(collector_id) {}

ClickHouseWriter::~ClickHouseWriter() {
  if (open_ && error_.empty()) finish();
}

// Collectors started together on a new database create its tables at the
// same time: ClickHouse may then fail a CREATE … IF NOT EXISTS ("already
// exists", or a table "is creating or attaching right now"); another try
// finds the object made.
std::string ClickHouseWriter::create(const std::string& sql, bool in_database) {
  std::string e;
  for (int attempt = 0; attempt < 20; ++attempt) {
    e = client_.query(sql, nullptr, in_database);
    if (e.empty()) return e;
    if (e.find("already exists") == std::string::npos && e.find("right now") == std::string::npos) {
      return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return e;
}

// A database written before a summary table existed gets it, filled from
// the executions stored so far. Executions another collector inserts into
// this database between the view's creation and that fill are counted
// twice: upgrade a database while no collector writes to it.
//
// The searches trust trace_buckets, trace_durations and traces_by_duration
// to hold every trace (a trace missing there is missing from a search), so
// these three are marked complete in `summaries_filled` once filled, and the store reads
// them only then. One found without its mark had its fill cut short (the
// collector killed, the server's timeout): it is dropped and made again.
std::string ClickHouseWriter::create_summaries() {
  if (std::string e = create(kFilledTable, true); !e.empty()) return e;
  for (const Summary& s : kSummaries) {
    std::string existed;
    if (std::string e = client_.query(std::string("EXISTS TABLE ") + s.name, &existed);
        !e.empty()) {
      return e;
    }
    bool exists = existed.rfind("1", 0) == 0;
    if (exists && s.of_traces) {
      std::string filled;
      if (std::string e = client_.query(std::string("SELECT count() FROM summaries_filled "
                                                    "WHERE name = '") +
                                            s.name + "'",
                                        &filled);
          !e.empty()) {
        return e;
      }
      if (filled.rfind("0", 0) == 0) {
        for (const std::string& drop : {std::string("DROP TABLE IF EXISTS ") + s.name + "_mv",
                                        std::string("DROP TABLE IF EXISTS ") + s.name}) {
          if (std::string e = client_.query(drop); !e.empty()) return e;
        }
        exists = false;
      }
    }
    for (const std::string& sql : {std::string(s.table), view_sql(s)}) {
      if (std::string e = create(sql, true); !e.empty()) return e;
    }
    if (exists) continue;
    const std::string fill_error =
        s.of_traces ? fill_from_traces(s.name, s.select, s.tail)
                    : client_.query(std::string("INSERT INTO ") + s.name + " " + s.select + s.tail);
    if (!fill_error.empty()) return fill_error;
    if (!s.of_traces) continue;
    if (std::string e =
            client_.query(std::string("INSERT INTO summaries_filled VALUES ('") + s.name + "')");
        !e.empty()) {
      return e;
    }
  }
  return "";
}

// A summary of the trace rows, filled in slices of start time that hold
// about fill_slice_traces_ rows each (traces' key starts with start_ns, so
// each INSERT reads only its slice): copying 10^8 records' trace rows in
// one INSERT could outlast the client's read timeout, and the fill would
// then never be marked. Slices assume traces spread evenly over the time;
// where they crowd, a slice holds more.
std::string ClickHouseWriter::fill_from_traces(const std::string& table, const std::string& select,
                                               const std::string& tail) {
  std::string result;
  if (std::string e =
          client_.query("SELECT min(start_ns), max(start_ns), count() FROM traces", &result);
      !e.empty()) {
    return e;
  }
  const auto rows = ClickHouseClient::parse_rows(result);
  if (rows.empty() || rows[0].size() != 3) return "unexpected answer to the count of traces";
  const int64_t first = std::stoll(rows[0][0]), last = std::stoll(rows[0][1]);
  const uint64_t count = std::stoull(rows[0][2]);
  if (count == 0) return "";
  const uint64_t per_slice = std::max<uint64_t>(1, fill_slice_traces_);
  const uint64_t slices = count / per_slice + (count % per_slice != 0);
  if (slices == 1) return client_.query("INSERT INTO " + table + " " + select + tail);
  // In unsigned arithmetic: last - first may not fit an int64_t (and with
  // two slices or more, span / slices + 1 cannot overflow).
  const uint64_t span = static_cast<uint64_t>(last) - static_cast<uint64_t>(first);
  const uint64_t width = span / slices + 1;
  for (uint64_t from = 0;; from += width) {
    const int64_t low = static_cast<int64_t>(static_cast<uint64_t>(first) + from);
    const bool final_slice = span - from < width;
    const int64_t high =
        final_slice ? last : static_cast<int64_t>(static_cast<uint64_t>(low) + width - 1);
    const std::string where =
        " WHERE start_ns >= " + std::to_string(low) + " AND start_ns <= " + std::to_string(high);
    if (std::string e = client_.query("INSERT INTO " + table + " " + select + where + tail);
        !e.empty()) {
      return e;
    }
    if (final_slice) return "";
  }
}

std::string ClickHouseWriter::open() {
  if (collector_id_ > kMaxCollectorId) {
    return "collector id " + std::to_string(collector_id_) + " is out of range (0-" +
           std::to_string(kMaxCollectorId) + ")";
  }
  if (std::string e = create("CREATE DATABASE IF NOT EXISTS " + client_.url().database, false);
      !e.empty()) {
    return e;
  }
  for (const char* sql : {kTracesTable, kExecutionsTable}) {
    if (std::string e = create(sql, true); !e.empty()) return e;
  }
  if (std::string e = create_summaries(); !e.empty()) return e;
  // Appending: row and client ids continue after the stored ones of this
  // collector's range. (max() of no rows is 0 in ClickHouse.) The last
  // range ends one short of 2^64.
  const uint64_t first_id = std::max<uint64_t>(1, uint64_t{collector_id_} << 48);
  const uint64_t id_end = collector_id_ == kMaxCollectorId ? std::numeric_limits<uint64_t>::max()
                                                           : (uint64_t{collector_id_} + 1) << 48;
  const int64_t first_client = std::max<int64_t>(1, int64_t{collector_id_} << 32);
  const int64_t client_end = (int64_t{collector_id_} + 1) << 32;
  const std::string range = " FROM traces WHERE id >= " + std::to_string(first_id) + " AND id < " +
                            std::to_string(id_end);
  std::string result;
  if (std::string e = client_.query("SELECT max(id) + 1, max(client) + 1" + range, &result);
      !e.empty()) {
    return e;
  }
  next_id_ = first_id;
  next_client_id_ = first_client;
  const auto rows = ClickHouseClient::parse_rows(result);
  if (!rows.empty() && rows[0].size() == 2) {
    next_id_ = std::max<uint64_t>(first_id, std::stoull(rows[0][0]));
    next_client_id_ = std::max<int64_t>(first_client, std::stoll(rows[0][1]));
  }
  if (next_id_ >= id_end || next_client_id_ >= client_end) {
    return "collector " + std::to_string(collector_id_) + "'s id range in " +
           client_.url().database + " is used up";
  }
  open_ = true;
  return "";
}

void ClickHouseWriter::add(const analysis::Trace& trace, int64_t client) {
  if (!error_.empty()) return;
  insert(trace, true, "", client);
  if (++pending_ >= batch_traces_) commit();
}

void ClickHouseWriter::add_invalid(const analysis::InvalidTrace& trace, int64_t client) {
  if (!error_.empty()) return;
  analysis::Trace partial = trace.partial;
  partial.trace_id = trace.trace_id;
  insert(partial, false, invalid_trace_problem(trace), client);
  if (++pending_ >= batch_traces_) commit();
}

void ClickHouseWriter::count(const analysis::Trace&) { reduction_unsupported(); }

void ClickHouseWriter::add_reduced(const analysis::ReducedTrace&, int64_t) {
  reduction_unsupported();
}

void ClickHouseWriter::reduction_unsupported() {
  if (error_.empty()) error_ = "the ClickHouse store does not take reduced traces (--reduce)";
}

void ClickHouseWriter::insert(const analysis::Trace& trace, bool valid, const std::string& problem,
                              int64_t client) {
  const uint64_t id = next_id_++;
  // Start and duration as TraceCatalog and the SQLite index compute them.
  int64_t start = 0, end = 0;
  uint32_t failed = 0;
  bool first = true;
  std::vector<std::string_view> stack;
  uint32_t seq = 0;
  for (const analysis::Execution& e : trace.executions) {
    if (e.failed) ++failed;
    if (first || e.tin < start) start = e.tin;
    if (first || std::max(e.tin, e.tout) > end) end = std::max(e.tin, e.tout);
    first = false;
    // Caller: the nearest earlier execution one level up (as the SQLite index).
    const size_t depth = static_cast<size_t>(std::max(e.ess, 0));
    stack.resize(std::min(stack.size(), depth));
    const std::string_view caller =
        depth == 0 || stack.size() < depth ? std::string_view() : stack.back();
    std::string& r = execution_rows_;
    field(r, id);
    field(r, trace.trace_id);
    field(r, seq++);
    field(r, e.eoi);
    field(r, e.ess);
    field(r, e.operation);
    field(r, e.component);
    field(r, e.host);
    field(r, e.tin);
    field(r, e.tout);
    field(r, e.failed ? 1 : 0);
    field(r, e.cause);
    field(r, valid ? 1 : 0);
    field(r, caller);
    end_row(r);
    stack.push_back(e.operation);
  }
  std::string& r = trace_rows_;
  field(r, id);
  field(r, trace.trace_id);
  field(r, analysis::root_operation(trace));
  field(r, start);
  field(r, end - start);
  field(r, trace.host);
  field(r, trace.thread_id);
  field(r, trace.parent_trace_id);
  field(r, static_cast<uint32_t>(trace.executions.size()));
  field(r, failed);
  field(r, valid ? 1 : 0);
  field(r, std::string_view(problem));
  field(r, client);
  end_row(r);
}

void ClickHouseWriter::put_client(const ClientRecord& client) {
  next_client_id_ = std::max(next_client_id_, client.id + 1);
}

std::string ClickHouseWriter::commit() {
  if (!error_.empty()) return error_;
  // Executions first: a reader that finds a trace finds its executions.
  std::string e = client_.insert("executions", execution_rows_);
  if (e.empty()) e = client_.insert("traces", trace_rows_);
  execution_rows_.clear();
  trace_rows_.clear();
  pending_ = 0;
  if (!e.empty()) error_ = "cannot write to " + e;
  return error_;
}

std::string ClickHouseWriter::finish() {
  std::string e = commit();
  open_ = false;
  return e;
}

}  // namespace sonde::store
