// Searches by start time in ClickHouse without reading every trace row.
//
// Debian 12's clickhouse-server (18.16) reads every row that passes a
// WHERE before it sorts for ORDER BY start_ns LIMIT n, and count() reads
// the filter's columns of every row: both grew with the store (0.4-0.7 s
// p95 at 10^7 records, docs/PERFORMANCE.md). The `trace_buckets` summary
// (clickhouse_writer.cpp) counts traces per 2^36 ns of start time, per
// validity, root operation and host, with each bucket's first and last
// start.
// From it a search learns where its page lies and reads only the trace
// rows of those times, which the primary key (start_ns first) finds
// without a scan:
// - the page: read in windows from the range's start, each sized from the
//   buckets' counts to hold about twice what the page still needs (traces
//   assumed even between a bucket's first and last start); if the filters
//   are more than the summary's columns (a duration band, failed only),
//   the counts are upper bounds, and a window that gives less than
//   half its expectation doubles the next;
// - the count: the summary's sum, exact when the filters are its own
//   columns (the range's partial first and last buckets counted in the
//   rows); otherwise exact up to TraceQuery::exact_count_traces traces,
//   and past it estimated from an even sample of buckets
//   (TraceQueryResult::matched_estimated), as the embedded store does.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "store/clickhouse_store.hpp"
#include "store/clickhouse_writer.hpp"

namespace sonde::store {

namespace {

// Rows a sampled count may read before it stops adding buckets.
constexpr uint64_t kSampleTraces = 200'000;
constexpr size_t kSampleBuckets = 16;

int64_t bucket_of(int64_t start_ns) { return start_ns >> kTraceBucketShift; }
uint64_t text_u64(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }
int64_t text_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }

struct Bucket {
  int64_t bucket = 0;
  uint64_t traces = 0;             // exact, or an upper bound (see find_by_start)
  int64_t from_ns = 0, to_ns = 0;  // its part of the searched range
};

}  // namespace

TraceQueryResult ClickHouseStore::find_by_start(const TraceQuery& q) {
  const analysis::TraceFilter& f = q.filter;
  const std::string filters = filter_sql(f);
  // Conditions trace_buckets has the columns for; with only these the
  // summary's counts are exact.
  std::string summary = " WHERE bucket >= " + std::to_string(bucket_of(q.from_ns)) +
                        " AND bucket <= " + std::to_string(bucket_of(q.to_ns));
  if (f.only_invalid) {
    summary += " AND valid = 0";
  } else if (!f.include_invalid) {
    summary += " AND valid = 1";
  }
  if (!f.operation.empty()) {
    summary += " AND position(root_operation, " + ClickHouseClient::quote(f.operation) + ") > 0";
  }
  if (!f.host.empty()) summary += " AND host = " + ClickHouseClient::quote(f.host);
  // Durations are never negative (end - start over a trace's executions).
  const bool exact = f.min_duration <= 0 && f.max_duration < 0 && !f.only_failed;

  TraceQueryResult result;
  std::vector<Bucket> buckets;
  for (const auto& r :
       rows("SELECT bucket, countMerge(traces) AS n, minMerge(first), maxMerge(last) "
            "FROM trace_buckets" +
            summary + " GROUP BY bucket HAVING n > 0 ORDER BY bucket")) {
    if (r.size() != 4) continue;
    Bucket b;
    b.bucket = text_i64(r[0]);
    b.traces = text_u64(r[1]);
    const int64_t first = text_i64(r[2]), last = text_i64(r[3]);
    // The part of the bucket its traces occupy, within the range.
    b.from_ns = std::max(q.from_ns, first);
    b.to_ns = std::min(q.to_ns, last);
    if (b.from_ns > b.to_ns) continue;  // its traces are all outside the range
    // A bucket the range cuts: its count is of the whole bucket.
    if (exact && (b.from_ns != first || b.to_ns != last)) {
      b.traces = count_where(time_sql(b.from_ns, b.to_ns) + filters);
      if (b.traces == 0) continue;
    }
    buckets.push_back(b);
  }
  if (!last_error_.empty()) return result;

  // The page, window by window from the range's start. A window is sized
  // to hold about twice what the page still needs, assuming traces spread
  // evenly within a bucket (a busy collector puts millions in one); when
  // a window gives fewer, the next is sized for twice as many.
  uint64_t skip = q.offset;
  size_t need = q.limit;
  double target = 2.0 * static_cast<double>(std::max<uint64_t>(1, skip + need));
  size_t i = 0;
  int64_t cursor = buckets.empty() ? 0 : buckets[0].from_ns;
  while (need > 0 && i < buckets.size() && last_error_.empty()) {
    // The window's end: whole buckets while they fit the target, then the
    // share of the next bucket that makes it up.
    double expected = 0;
    int64_t end = cursor;
    size_t j = i;
    for (; j < buckets.size(); ++j) {
      const Bucket& b = buckets[j];
      const int64_t from = j == i ? cursor : b.from_ns;
      const double span = static_cast<double>(b.to_ns - b.from_ns) + 1;
      const double here =
          static_cast<double>(b.traces) * (static_cast<double>(b.to_ns - from) + 1) / span;
      if (expected + here < target) {
        expected += here;
        end = b.to_ns;
        continue;
      }
      const double share = (target - expected) / std::max(1.0, here);
      const double len = (static_cast<double>(b.to_ns - from) + 1) * share;
      end = std::min(b.to_ns, from + std::max<int64_t>(0, static_cast<int64_t>(len)));
      expected = target;
      break;
    }
    const std::string where = time_sql(cursor, end) + filters;
    size_t got = 0;
    // Skipping needs the window's count; the first page does not.
    const uint64_t in_window = skip > 0 ? count_where(where) : 0;
    if (skip > 0 && in_window <= skip) {
      skip -= in_window;
      got = in_window;
    } else {
      const size_t before = result.entries.size();
      fetch_entries(where, kStartOrder, skip, need, result.entries);
      got = result.entries.size() - before + skip;
      need -= std::min(need, result.entries.size() - before);
      skip = 0;
    }
    if (static_cast<double>(got) < expected / 2) target *= 2;
    // On past the window: to the next bucket if it ended one.
    while (i < buckets.size() && buckets[i].to_ns <= end) ++i;
    if (i < buckets.size()) cursor = std::max(buckets[i].from_ns, end + 1);
  }

  // The count.
  uint64_t upper = 0;
  for (const Bucket& b : buckets) upper += b.traces;
  if (exact) {
    result.matched = upper;
  } else if (q.exact_count_traces == 0 || upper <= q.exact_count_traces) {
    result.matched = count_where(time_sql(q.from_ns, q.to_ns) + filters);
  } else {
    // Evenly spaced buckets, as many as kSampleTraces rows allow (at least
    // one); what they match scales to the rest by their share of the
    // summary's count.
    const size_t step = std::max<size_t>(1, buckets.size() / kSampleBuckets);
    std::string ranges;
    uint64_t sampled_upper = 0;
    for (size_t k = step / 2; k < buckets.size() && sampled_upper < kSampleTraces; k += step) {
      ranges += std::string(ranges.empty() ? "" : " OR ") +
                "(start_ns >= " + std::to_string(buckets[k].from_ns) +
                " AND start_ns <= " + std::to_string(buckets[k].to_ns) + ")";
      sampled_upper += buckets[k].traces;
    }
    const uint64_t sampled = count_where(" WHERE (" + ranges + ")" + filters);
    result.matched =
        static_cast<uint64_t>(static_cast<double>(upper) * static_cast<double>(sampled) /
                                  static_cast<double>(std::max<uint64_t>(1, sampled_upper)) +
                              0.5);
    result.matched_estimated = true;
    // An estimate never says fewer than the page shows.
    if (!result.entries.empty())
      result.matched = std::max<uint64_t>(result.matched, q.offset + result.entries.size());
  }
  return result;
}

}  // namespace sonde::store
