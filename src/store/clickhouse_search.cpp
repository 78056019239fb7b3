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
//   columns (a bucket the range cuts counted in its rows, up to
//   TraceQuery::exact_count_traces of them); with other filters, counted
//   in the rows up to that limit, and past it the summary's count times
//   the share that passes them in a sample of about 200,000 traces from
//   up to 16 buckets (TraceQueryResult::matched_estimated, as the
//   embedded store estimates past the same limit).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

#include "analysis/model/duration_accumulator.hpp"
#include "store/clickhouse_store.hpp"
#include "store/clickhouse_writer.hpp"

namespace sonde::store {

namespace {

// Traces a sampled count reads (about), spread over its buckets.
constexpr uint64_t kSampleTraces = 200'000;
constexpr size_t kSampleBuckets = 16;

int64_t bucket_of(int64_t start_ns) { return start_ns >> kTraceBucketShift; }
uint64_t add_saturated(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

uint64_t text_u64(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }
int64_t text_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }

struct Bucket {
  uint64_t traces = 0;             // exact, or an upper bound (see find_by_start)
  int64_t from_ns = 0, to_ns = 0;  // its part of the searched range
};

}  // namespace

TraceQueryResult ClickHouseStore::find_by_start(const TraceQuery& q) {
  const analysis::TraceFilter& f = q.filter;
  // The conditions trace_buckets has the columns for, as SQL for either
  // table; with only these the summary's counts are exact. The others (a
  // duration band, failed only) are checked in the trace rows.
  const std::string common = summary_filter_sql(f);
  const std::string extra = row_filter_sql(f);
  const std::string filters = common + extra;
  const std::string summary = " WHERE bucket >= " + std::to_string(bucket_of(q.from_ns)) +
                              " AND bucket <= " + std::to_string(bucket_of(q.to_ns)) + common;
  // Durations are never negative (end - start over a trace's executions).
  const bool exact = f.min_duration <= 0 && f.max_duration < 0 && !f.only_failed;
  const uint64_t exact_limit =
      q.exact_count_traces == 0 ? std::numeric_limits<uint64_t>::max() : q.exact_count_traces;
  bool estimated = false;

  TraceQueryResult result;
  std::vector<Bucket> buckets;
  for (const auto& r :
       rows("SELECT bucket, countMerge(traces) AS n, minMerge(first), maxMerge(last) "
            "FROM trace_buckets" +
            summary + " GROUP BY bucket HAVING n > 0 ORDER BY bucket")) {
    if (r.size() != 4) continue;
    Bucket b;
    b.traces = text_u64(r[1]);
    const int64_t first = text_i64(r[2]), last = text_i64(r[3]);
    // The part of the bucket its traces occupy, within the range.
    b.from_ns = std::max(q.from_ns, first);
    b.to_ns = std::min(q.to_ns, last);
    if (b.from_ns > b.to_ns) continue;  // its traces are all outside the range
    // A bucket the range cuts: its count is of the whole bucket. Counted
    // in the rows up to the exact limit, else its share by time.
    if (b.from_ns != first || b.to_ns != last) {
      if (b.traces <= exact_limit) {
        b.traces = count_where(time_sql(b.from_ns, b.to_ns) + common);
      } else {
        b.traces = static_cast<uint64_t>(std::ceil(static_cast<double>(b.traces) *
                                                   (static_cast<double>(b.to_ns - b.from_ns) + 1) /
                                                   (static_cast<double>(last - first) + 1)));
        estimated = true;
      }
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
  double target = 2.0 * static_cast<double>(std::max<uint64_t>(1, add_saturated(skip, need)));
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
      // Within the bucket: from + len cannot pass to_ns (nor overflow).
      end = from +
            std::clamp<int64_t>(static_cast<int64_t>(std::min(len, 9.0e18)), 0, b.to_ns - from);
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

  // The count: the summary's, of the traces that pass the conditions it
  // has columns for.
  uint64_t summary_count = 0;
  for (const Bucket& b : buckets) summary_count += b.traces;
  if (exact) {
    result.matched = summary_count;
    result.matched_estimated = estimated;
  } else if (summary_count <= exact_limit) {
    result.matched = count_where(time_sql(q.from_ns, q.to_ns) + filters);
  } else {
    // The share of those traces that pass the other conditions too, in a
    // sample: evenly spaced buckets, and in each the first part holding
    // its share of kSampleTraces (traces even within a bucket: a busy
    // collector's bucket holds tens of millions).
    const size_t step = std::max<size_t>(1, (buckets.size() + kSampleBuckets - 1) / kSampleBuckets);
    const size_t sampled_buckets = (buckets.size() + step - 1 - step / 2) / step;
    const double per_bucket = static_cast<double>(kSampleTraces) /
                              static_cast<double>(std::max<size_t>(1, sampled_buckets));
    std::string ranges;
    for (size_t k = step / 2; k < buckets.size(); k += step) {
      const Bucket& b = buckets[k];
      const double part = std::min(1.0, per_bucket / static_cast<double>(b.traces));
      const int64_t to =
          b.from_ns + static_cast<int64_t>(static_cast<double>(b.to_ns - b.from_ns) * part);
      ranges += std::string(ranges.empty() ? "" : " OR ") +
                "(start_ns >= " + std::to_string(b.from_ns) +
                " AND start_ns <= " + std::to_string(to) + ")";
    }
    const auto sample =
        rows("SELECT count(), countIf(1" + extra + ") FROM traces WHERE (" + ranges + ")" + common);
    const double all =
        sample.empty() || sample[0].size() != 2 ? 0 : static_cast<double>(text_u64(sample[0][0]));
    const double passed = all == 0 ? 0 : static_cast<double>(text_u64(sample[0][1]));
    result.matched = static_cast<uint64_t>(
        static_cast<double>(summary_count) * (all == 0 ? 0 : passed / all) + 0.5);
    result.matched_estimated = true;
  }
  // An estimate never says fewer than the page shows.
  if (result.matched_estimated && !result.entries.empty())
    result.matched = std::max<uint64_t>(result.matched, q.offset + result.entries.size());
  return result;
}

TraceQueryResult ClickHouseStore::find_longest(const TraceQuery& q) {
  // The count is the one a search by start time gives (no page).
  TraceQuery count_only = q;
  count_only.order = analysis::TraceOrder::kStart;
  count_only.limit = 0;
  count_only.offset = 0;
  TraceQueryResult result = find_by_start(count_only);
  if (q.limit == 0 || !last_error_.empty()) return result;

  // Traces per duration bucket, longest first, for the conditions the
  // summary has columns for (not the time range or the other filters: it
  // has no time, so its counts are upper bounds).
  const analysis::TraceFilter& f = q.filter;
  const std::string common = summary_filter_sql(f);
  std::vector<std::pair<size_t, uint64_t>> durations;  // bucket, traces; longest first
  // A duration band: only its buckets.
  std::string band =
      " AND bucket >= " + std::to_string(analysis::DurationAccumulator::histogram_bucket(
                              std::max<int64_t>(0, f.min_duration)));
  if (f.max_duration >= 0) {
    band += " AND bucket <= " +
            std::to_string(analysis::DurationAccumulator::histogram_bucket(f.max_duration));
  }
  for (const auto& r : rows("SELECT bucket, sum(traces) FROM trace_durations WHERE 1" + common +
                            band + " GROUP BY bucket ORDER BY bucket DESC")) {
    if (r.size() == 2) durations.emplace_back(text_u64(r[0]), text_u64(r[1]));
  }
  if (!last_error_.empty()) return result;

  // The page lies above some duration: take the bucket where the traces
  // from the longest reach the page's end, read only the rows at least
  // that long, and lower the bar (wanting twice as many) until those rows
  // hold the page or the bar is gone. The page is then exact: every
  // trace longer than the bar was read. Below a bar the rows come from
  // the copy ordered by duration once it is whole: there the bar is a
  // range of the primary key, and only the granules above it are read.
  // Without a bar, from `traces`, whose key starts with the start time: a
  // time range narrows what it reads there, and nothing narrows the copy.
  const std::string where = time_sql(q.from_ns, q.to_ns) + filter_sql(f);
  const char* order = " ORDER BY duration_ns DESC, trace_id, id";
  // The summary has no time and no failed flag: with those filters a bar
  // may hold too few; after three tries there is no bar.
  const uint64_t page_end = add_saturated(q.offset, q.limit);
  uint64_t want = std::max<uint64_t>(1, page_end);
  for (int attempt = 0;; ++attempt, want = add_saturated(want, want)) {
    uint64_t seen = 0;
    size_t i = 0;
    while (i < durations.size() && seen < want) seen += durations[i++].second;
    const bool all = i == durations.size() || attempt >= 3;
    const int64_t bar =
        all ? std::numeric_limits<int64_t>::min()
            : analysis::DurationAccumulator::histogram_bucket_low(durations[i - 1].first);
    std::vector<analysis::TraceEntry> page;
    const std::string above = all ? where : where + " AND duration_ns >= " + std::to_string(bar);
    const char* table = !all && has_traces_by_duration_ ? "traces_by_duration" : "traces";
    fetch_entries(above, order, q.offset, q.limit, page, table);
    if (!last_error_.empty()) return result;
    if (all || page.size() == q.limit) {
      result.entries = std::move(page);
      return result;
    }
  }
}

}  // namespace sonde::store
