// Traces many to a row (store/trace_batch.hpp): the packing round-trips,
// the Bloom filter has no false negatives, and an index of many batch rows
// (batches cut by size and by commits at odd places, trace ids clashing
// across clients, invalid traces) answers every search, page and lookup
// as the trace catalogue does from the same traces.
// Over 500 lines: every query is checked against the catalogue on the
// same generated traces, which all cases share.
#include "store/trace_batch.hpp"

#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../format/format_test_support.hpp"
#include "analysis/reconstruct/trace_catalog.hpp"
#include "clickhouse_compare.hpp"
#include "format/varint.hpp"
#include "store/execution_blob.hpp"
#include "store/index_writer.hpp"
#include "store/memory_store.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;

TEST(TraceBatch, EntriesAndExecutionsRoundTrip) {
  TraceBatchBuilder b;
  std::vector<BatchEntry> in;
  for (int i = 0; i < 300; ++i) {
    BatchEntry e;
    e.trace_id = i % 7 == 0 ? -i : i * 1'000'003;
    e.start = 1'700'000'000'000'000'000 + (i % 5) * 1'000 - i;
    e.duration = i * 13;
    e.root = static_cast<uint64_t>(i % 11);
    e.host = static_cast<uint64_t>(i % 3);
    e.thread_id = i % 4 == 0 ? -1 : i;
    e.parent_trace_id = i - 1;
    e.executions = static_cast<uint32_t>(i % 9);
    e.failed = static_cast<uint32_t>(i % 2);
    e.valid = i % 10 != 0;
    e.client = i % 6;
    in.push_back(e);
    b.add(e, std::string(static_cast<size_t>(i % 17), static_cast<char>('a' + i % 26)));
  }
  in[10].problem = "no-entry-event: no before event with order index 0";
  // (The builder copied the problem-less entry 10; build a second batch
  // with a problem to check that path.)
  const BatchRow first = b.take();
  EXPECT_EQ(first.all.traces, 300);
  EXPECT_EQ(first.all.invalid, 30);
  EXPECT_TRUE(b.empty());
  b.add(in[10], "xyz");
  const BatchRow second = b.take();

  std::string raw;
  std::vector<BatchEntry> out;
  ASSERT_EQ(unpack_batch_entries(first.entries, raw, out), "");
  ASSERT_EQ(out.size(), in.size());
  std::string executions;
  ASSERT_EQ(unpack_batch_blob(first.executions, executions), "");
  size_t offset = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].trace_id, in[i].trace_id) << i;
    EXPECT_EQ(out[i].start, in[i].start) << i;
    EXPECT_EQ(out[i].duration, in[i].duration) << i;
    EXPECT_EQ(out[i].root, in[i].root) << i;
    EXPECT_EQ(out[i].host, in[i].host) << i;
    EXPECT_EQ(out[i].thread_id, in[i].thread_id) << i;
    EXPECT_EQ(out[i].parent_trace_id, in[i].parent_trace_id) << i;
    EXPECT_EQ(out[i].executions, in[i].executions) << i;
    EXPECT_EQ(out[i].failed, in[i].failed) << i;
    EXPECT_EQ(out[i].valid, in[i].valid) << i;
    EXPECT_EQ(out[i].client, in[i].client) << i;
    EXPECT_EQ(out[i].problem, "") << i;
    EXPECT_EQ(out[i].executions_offset, offset) << i;
    EXPECT_EQ(out[i].executions_size, static_cast<size_t>(i % 17)) << i;
    EXPECT_EQ(executions.substr(offset, i % 17),
              std::string(i % 17, static_cast<char>('a' + i % 26)))
        << i;
    offset += static_cast<size_t>(i % 17);
    EXPECT_TRUE(batch_may_hold(first.bloom, in[i].trace_id)) << i;
  }
  EXPECT_EQ(offset, executions.size());
  // About 1 % false positives is the design; far fewer than all must pass.
  int false_positives = 0;
  for (int64_t id = 5'000'000'000; id < 5'000'010'000; ++id) {
    false_positives += batch_may_hold(first.bloom, id) ? 1 : 0;
  }
  EXPECT_LT(false_positives, 500);
  EXPECT_EQ(first.min_trace_id, -294);
  EXPECT_EQ(first.max_trace_id, 299 * 1'000'003);

  ASSERT_EQ(unpack_batch_entries(second.entries, raw, out), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].problem, in[10].problem);
  EXPECT_FALSE(out[0].valid);
}

// Entries hold ids relative to the previous entry's (flag bit 2): the
// extremes of int64 wrap and come back; a row written before, with
// absolute ids and no such bit, still reads.
TEST(TraceBatch, RelativeIdsRoundTripAndAbsoluteOnesStillRead) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<std::pair<int64_t, int64_t>> ids = {{kMax, kMin}, {kMin, kMax}, {0, 0},
                                                        {-1, kMax},   {kMax, kMax}, {42, 41}};
  TraceBatchBuilder b;
  for (const auto& [id, parent] : ids) {
    BatchEntry e;
    e.trace_id = id;
    e.parent_trace_id = parent;
    e.valid = true;
    b.add(e, "");
  }
  const BatchRow row = b.take();
  std::string raw;
  std::vector<BatchEntry> out;
  ASSERT_EQ(unpack_batch_entries(row.entries, raw, out), "");
  ASSERT_EQ(out.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(out[i].trace_id, ids[i].first) << i;
    EXPECT_EQ(out[i].parent_trace_id, ids[i].second) << i;
  }

  // The encoding before bit 2: flags 1 (valid), absolute ids.
  std::string old;
  for (const auto& [id, parent] : {std::pair<int64_t, int64_t>{7, 7}, {9, 7}}) {
    format::put_varint(old, 1);
    format::put_varint(old, format::zigzag(id));
    for (int k = 0; k < 4; ++k) format::put_varint(old, 0);  // start, duration, root, host
    format::put_varint(old, format::zigzag(-1));             // thread
    format::put_varint(old, format::zigzag(parent));
    for (int k = 0; k < 4; ++k) format::put_varint(old, 0);  // executions .. bytes
  }
  std::string packed(ZSTD_compressBound(old.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), old.data(), old.size(), 1));
  ASSERT_EQ(unpack_batch_entries(packed, raw, out), "");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].trace_id, 7);
  EXPECT_EQ(out[0].parent_trace_id, 7);
  EXPECT_EQ(out[1].trace_id, 9);
  EXPECT_EQ(out[1].parent_trace_id, 7);
  EXPECT_EQ(out[1].thread_id, -1);
}

void expect_bounds(const TraceBounds& got, const TraceBounds& want) {
  EXPECT_EQ(got.traces, want.traces);
  EXPECT_EQ(got.invalid, want.invalid);
  EXPECT_EQ(got.first_start, want.first_start);
  EXPECT_EQ(got.last_start, want.last_start);
  EXPECT_EQ(got.min_duration, want.min_duration);
  EXPECT_EQ(got.max_duration, want.max_duration);
}

TEST(TraceBatch, EachRootOperationIsSummedWithItsOwnBounds) {
  TraceBatchBuilder b;
  // Root 7: three traces, one invalid; root 3: one trace.
  const struct {
    uint64_t root;
    int64_t start, duration;
    bool valid;
  } traces[] = {{7, 500, 40, true}, {3, 100, 900, true}, {7, 200, 10, false}, {7, 800, 25, true}};
  for (const auto& t : traces) {
    BatchEntry e;
    e.root = t.root;
    e.start = t.start;
    e.duration = t.duration;
    e.valid = t.valid;
    b.add(e, "");
  }
  const BatchRow row = b.take();
  // Written out by hand from the four traces above.
  expect_bounds(row.all, {4, 1, 100, 800, 10, 900});
  ASSERT_EQ(row.roots.size(), 2u);
  EXPECT_EQ(row.roots[0].root, 3u);  // by root id
  expect_bounds(row.roots[0].bounds, {1, 0, 100, 100, 900, 900});
  EXPECT_EQ(row.roots[1].root, 7u);
  expect_bounds(row.roots[1].bounds, {3, 1, 200, 800, 10, 40});
  // The next batch starts its summaries afresh.
  BatchEntry e;
  e.root = 7;
  b.add(e, "");
  const BatchRow next = b.take();
  ASSERT_EQ(next.roots.size(), 1u);
  EXPECT_EQ(next.roots[0].bounds.traces, 1);
}

TEST(TraceBatch, MergedBoundsAreThoseOfTheUnion) {
  TraceBounds a, b, none;
  a.add(500, 40, true);
  a.add(200, 10, false);
  b.add(100, 900, true);
  TraceBounds merged = a;
  merged.merge(b);
  expect_bounds(merged, {3, 1, 100, 500, 10, 900});
  // An empty set changes nothing, and takes the other's bounds whole.
  merged.merge(none);
  expect_bounds(merged, {3, 1, 100, 500, 10, 900});
  none.merge(b);
  expect_bounds(none, {1, 0, 100, 100, 900, 900});
}

TEST(TraceBatch, TraceIdSpansCoverEveryIdAndStayNarrow) {
  constexpr auto kWidth = static_cast<int64_t>(kIdSpanWidth);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // Three processes' id blocks interleaved, as a collector's batch holds them.
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 300; ++i) ids.push_back((i % 3) << 40 | (4096 + i / 3));
  const std::vector<TraceIdSpan> three = trace_id_spans(ids);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].lo, 4096);
  EXPECT_EQ(three[0].hi, 4096 + 99);
  EXPECT_EQ(three[2].lo, (int64_t{2} << 40) + 4096);
  // The width is the bound: lo + width joins, lo + width + 1 does not.
  EXPECT_EQ(trace_id_spans({0, kWidth}).size(), 1u);
  EXPECT_EQ(trace_id_spans({0, kWidth + 1}).size(), 2u);
  // Greedy from the lowest: many ids a step apart make spans of full width.
  std::vector<int64_t> steps;
  for (int64_t i = 0; i <= 4; ++i) steps.push_back(i * kWidth / 2);
  const std::vector<TraceIdSpan> wide = trace_id_spans(steps);
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(wide[0].hi, kWidth);
  EXPECT_EQ(wide[1].lo, kWidth * 3 / 2);
  // Extremes, duplicates and negative ids: no overflow, every id covered.
  const std::vector<int64_t> odd = {kMax, kMin, -1, -1, 0, kMin + 1, kMax - kWidth};
  const std::vector<TraceIdSpan> spans = trace_id_spans(odd);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].lo, kMin);
  EXPECT_EQ(spans[0].hi, kMin + 1);
  EXPECT_EQ(spans[1].lo, -1);
  EXPECT_EQ(spans[1].hi, 0);
  EXPECT_EQ(spans[2].lo, kMax - kWidth);
  EXPECT_EQ(spans[2].hi, kMax);
  for (const int64_t id : odd) {
    const bool covered = std::any_of(spans.begin(), spans.end(), [id](const TraceIdSpan& s) {
      return s.lo <= id && id <= s.hi && s.lo >= lowest_span_start(id);
    });
    EXPECT_TRUE(covered) << id;
  }
  EXPECT_EQ(lowest_span_start(kMin + 5), kMin);
  EXPECT_EQ(lowest_span_start(0), -kWidth);
  EXPECT_TRUE(trace_id_spans({}).empty());
}

TEST(TraceBatch, DamagedBlobsAreReportedNotRead) {
  std::string raw;
  std::vector<BatchEntry> out;
  EXPECT_EQ(unpack_batch_entries("garbage", raw, out), "entries not a zstd frame");
  TraceBatchBuilder b;
  BatchEntry e;
  e.problem = "x";
  e.valid = false;
  b.add(e, "");
  ASSERT_EQ(unpack_batch_blob(b.take().entries, raw), "");
  // The same entry without its last byte, in a well-formed frame.
  const std::string cut = raw.substr(0, raw.size() - 1);
  std::string frame(ZSTD_compressBound(cut.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), cut.data(), cut.size(), 1));
  EXPECT_EQ(unpack_batch_entries(frame, raw, out), "entries: truncated at byte 0");
}

// Random traces with the same ids from several clients, some invalid.
class ManyBatches : public ::testing::Test {
 protected:
  static constexpr int kTraces = 10'000;

  // The traces' strings are views: these outlive them.
  inline static const std::vector<std::string> ops = {"shop.Cart.add()", "shop.Order.pay()",
                                                      "shop.Catalog.find()", "db.query()"};
  inline static const std::vector<std::string> hosts = {"alpha", "beta", ""};

  void SetUp() override {
    std::mt19937_64 random(42);
    int64_t t = 1'700'000'000'000'000'000;
    for (int i = 0; i < kTraces; ++i) {
      analysis::Trace trace;
      trace.trace_id = 1 + i / 3;  // three clients, the same ids
      trace.thread_id = i % 5;
      trace.parent_trace_id = trace.trace_id;
      trace.host = hosts[random() % hosts.size()];
      t += static_cast<int64_t>(random() % 2000);  // ties in start now and then
      const int calls = 1 + static_cast<int>(random() % 4);
      int64_t at = t;
      for (int c = 0; c < calls; ++c) {
        analysis::Execution e;
        e.operation = ops[c == 0 ? random() % 3 : 3];
        e.component = "C";
        e.host = trace.host;
        e.eoi = c;
        e.ess = c == 0 ? 0 : 1;
        e.tin = at;
        e.tout = at + static_cast<int64_t>(random() % 100'000);
        e.failed = random() % 20 == 0;
        if (e.failed) e.cause = "java.lang.IllegalStateException";
        at += 10;
        trace.executions.push_back(e);
      }
      // Root covers its callees.
      trace.executions[0].tout = std::max(trace.executions[0].tout, at + 1);
      const int64_t client = i % 3 + 1;
      if (random() % 25 == 0) {
        analysis::InvalidTrace bad;
        bad.trace_id = trace.trace_id;
        bad.problems.push_back({analysis::TraceProblemKind::kNoEntryEvent, "made up"});
        bad.partial = trace;
        bad.partial.executions.back().tout = -1;
        writer_input_.push_back({bad, client});
      } else {
        writer_input_.push_back({trace, client});
      }
    }
    // Commits every 5,000 traces: batches cut at 4,096 (their size) and at
    // 5,000 (the commit).
    IndexWriter w(5000);
    ASSERT_EQ(w.open(dir_.path()), "");
    analysis::TraceFilter everything;
    everything.include_invalid = true;
    for (const Input& in : writer_input_) {
      // The catalogue's entry for this trace alone, in input order.
      analysis::TraceCatalog one(everything, analysis::TraceOrder::kStart, 1);
      if (in.valid) {
        w.add(in.trace, in.client);
        one.on_trace(in.trace);
      } else {
        w.add_invalid(in.invalid, in.client);
        one.on_invalid_trace(in.invalid);
      }
      ASSERT_EQ(one.entries().size(), 1u);
      entries_.push_back(one.entries()[0]);
      valid_ += in.valid ? 1 : 0;
    }
    ASSERT_EQ(w.finish(), "");
    std::string error;
    store_ = SqliteStore::open(dir_.path(), &error);
    ASSERT_NE(store_, nullptr) << error;
  }

  // What the catalogue lists for `q`, in the store's order (ties as stored).
  std::vector<analysis::TraceEntry> expected(const TraceQuery& q, uint64_t* matched) const {
    std::vector<std::pair<size_t, analysis::TraceEntry>> all;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (matches(entries_[i], q)) all.emplace_back(i, entries_[i]);
    }
    *matched = all.size();
    std::stable_sort(all.begin(), all.end(), [&q](const auto& a, const auto& b) {
      const auto key = [&q](const auto& x) {
        return std::tuple(
            q.order == analysis::TraceOrder::kLongest ? -x.second.duration : x.second.start,
            x.second.trace_id, x.first);
      };
      return key(a) < key(b);
    });
    std::vector<analysis::TraceEntry> page;
    for (size_t i = q.offset; i < all.size() && page.size() < q.limit; ++i) {
      page.push_back(all[i].second);
    }
    return page;
  }

  struct Input {
    Input(const analysis::Trace& t, int64_t c) : trace(t), client(c), valid(true) {}
    Input(const analysis::InvalidTrace& t, int64_t c) : invalid(t), client(c), valid(false) {}
    analysis::Trace trace;
    analysis::InvalidTrace invalid;
    int64_t client;
    bool valid;
  };
  TempDir dir_{"sonde-batches"};
  std::vector<Input> writer_input_;
  std::vector<analysis::TraceEntry> entries_;  // the catalogue's, in input order
  uint64_t valid_ = 0;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(ManyBatches, EveryBatchRowHoldsManyTraces) {
  SqliteDb db;
  ASSERT_EQ(db.open(dir_ / "index.sqlite", SQLITE_OPEN_READONLY), "");
  SqliteStatement rows(db, "SELECT COUNT(*), SUM(traces), MAX(traces) FROM trace_batches");
  ASSERT_TRUE(rows.step()) << rows.error();
  // 4,096 + 904 (the commit at 5,000), twice: never one row per trace.
  EXPECT_EQ(rows.int64(0), 4);
  EXPECT_EQ(rows.int64(1), kTraces);
  EXPECT_EQ(rows.int64(2), static_cast<int64_t>(kMaxBatchTraces));
  // Beside each row: its roots (three root operations) and its id spans
  // (the ids run 1, 1, 1, 2, ...: one span a row).
  SqliteStatement roots(db,
                        "SELECT COUNT(*), SUM(traces), SUM(invalid), COUNT(DISTINCT batch) "
                        "FROM batch_roots");
  ASSERT_TRUE(roots.step()) << roots.error();
  EXPECT_EQ(roots.int64(0), 4 * 3);
  EXPECT_EQ(roots.int64(1), kTraces);
  EXPECT_EQ(roots.int64(2), static_cast<int64_t>(kTraces - valid_));
  EXPECT_EQ(roots.int64(3), 4);
  SqliteStatement spans(db, "SELECT COUNT(*), MIN(lo), MAX(hi), MAX(hi - lo) FROM batch_id_spans");
  ASSERT_TRUE(spans.step()) << spans.error();
  EXPECT_EQ(spans.int64(0), 4);
  EXPECT_EQ(spans.int64(1), 1);
  EXPECT_EQ(spans.int64(2), 1 + (kTraces - 1) / 3);
  EXPECT_LE(spans.int64(3), static_cast<int64_t>(kIdSpanWidth));
  const StoreInfo info = store_->info();
  EXPECT_EQ(info.traces, valid_);
  EXPECT_EQ(info.invalid_traces, kTraces - valid_);
  EXPECT_GT(info.invalid_traces, 0u);
  EXPECT_EQ(info.hosts, (std::vector<std::string>{"alpha", "beta"}));
}

TEST_F(ManyBatches, SearchesAndPagesAgreeWithTheCatalogue) {
  std::vector<TraceQuery> queries;
  TraceQuery q;
  queries.push_back(q);  // the first page, valid traces
  q.offset = 4090;       // across a batch boundary
  q.limit = 25;
  queries.push_back(q);
  q.order = analysis::TraceOrder::kLongest;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.include_invalid = true;
  q.limit = 1'000'000;
  queries.push_back(q);
  q.filter.only_invalid = true;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.operation = "Order";
  q.filter.host = "beta";
  q.filter.min_duration = 20'000;
  q.filter.max_duration = 60'000;
  q.limit = 50;
  q.offset = 10;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.only_failed = true;
  q.from_ns = 1'700'000'000'003'000'000;
  q.to_ns = 1'700'000'000'007'000'000;
  q.order = analysis::TraceOrder::kLongest;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.host = "no-such-host";
  queries.push_back(q);
  q = TraceQuery{};
  q.limit = 0;
  queries.push_back(q);
  // By root operation alone: rows counted from `batch_roots`, two roots
  // merged per row ("shop.C": Cart and Catalog), a name that roots no trace.
  q = TraceQuery{};
  q.filter.operation = "Order";
  queries.push_back(q);
  q.filter.operation = "shop.C";
  q.filter.include_invalid = true;
  q.order = analysis::TraceOrder::kLongest;
  q.offset = 4090;
  q.limit = 25;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.operation = "Cart";
  q.filter.min_duration = 30'000;
  q.from_ns = 1'700'000'000'002'000'000;
  q.to_ns = 1'700'000'000'008'000'000;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.operation = "shop";
  q.filter.only_invalid = true;
  q.limit = 1'000'000;
  queries.push_back(q);
  q = TraceQuery{};
  q.filter.operation = "db.query()";
  queries.push_back(q);
  for (size_t i = 0; i < queries.size(); ++i) {
    SCOPED_TRACE("query " + std::to_string(i));
    uint64_t matched = 0;
    const std::vector<analysis::TraceEntry> want = expected(queries[i], &matched);
    const TraceQueryResult got = store_->find_traces(queries[i]);
    EXPECT_EQ(store_->last_error(), "");
    EXPECT_EQ(got.matched, matched);
    ASSERT_EQ(got.entries.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      SCOPED_TRACE("entry " + std::to_string(k));
      test::expect_same_entry(got.entries[k], want[k]);
    }
  }
  // Not every query matches everything, nor nothing.
  EXPECT_EQ(store_->find_traces(queries[7]).matched, 0u);
  EXPECT_GT(store_->find_traces(queries[5]).matched, 0u);
  for (size_t i = 9; i < 13; ++i) EXPECT_GT(store_->find_traces(queries[i]).matched, 0u) << i;
  EXPECT_EQ(store_->find_traces(queries[13]).matched, 0u);  // a callee, never a root
}

TEST_F(ManyBatches, PastItsBudgetACountIsEstimatedFromAnEvenSampleAndSaysSo) {
  // A host search must unpack every row; its page fills from the first.
  TraceQuery q;
  q.filter.host = "beta";
  q.limit = 10;
  uint64_t matched = 0;
  const std::vector<analysis::TraceEntry> want = expected(q, &matched);
  const TraceQueryResult exact = store_->find_traces(q);  // the default budget
  EXPECT_FALSE(exact.matched_estimated);
  EXPECT_EQ(exact.matched, matched);
  q.exact_count_traces = 1000;  // rows 2 to 4 hold about 5,900
  const TraceQueryResult estimated = store_->find_traces(q);
  EXPECT_EQ(store_->last_error(), "");
  EXPECT_TRUE(estimated.matched_estimated);
  // The hosts are drawn at random, a third each: a sample of a row of
  // 4,096 traces lands within a few per cent of the truth.
  EXPECT_NEAR(static_cast<double>(estimated.matched), static_cast<double>(matched),
              0.1 * static_cast<double>(matched));
  EXPECT_NE(estimated.matched, 0u);
  // The page itself is never estimated.
  ASSERT_EQ(estimated.entries.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) test::expect_same_entry(estimated.entries[k], want[k]);
  q.exact_count_traces = 0;  // count everything
  const TraceQueryResult unlimited = store_->find_traces(q);
  EXPECT_FALSE(unlimited.matched_estimated);
  EXPECT_EQ(unlimited.matched, matched);
}

TEST_F(ManyBatches, ASearchByRootUnpacksOnlyTheRowsThatHoldIt) {
  // Damage the entries of every row; a root that no row holds, and a
  // search whose page the first rows fill, must not need them.
  {
    SqliteDb db;
    ASSERT_EQ(db.open(dir_ / "index.sqlite", SQLITE_OPEN_READWRITE), "");
    ASSERT_EQ(db.exec("UPDATE trace_batches SET entries = x'00' WHERE id > 1"), "");
  }
  std::string error;
  store_ = SqliteStore::open(dir_.path(), &error);
  ASSERT_NE(store_, nullptr) << error;
  TraceQuery q;
  q.filter.operation = "db.query()";
  EXPECT_EQ(store_->find_traces(q).matched, 0u);
  EXPECT_EQ(store_->last_error(), "");
  // Every Order trace, oldest first: the page comes from row 1 and the
  // other rows are counted from their root summaries.
  q.filter.operation = "Order";
  q.limit = 10;
  uint64_t matched = 0;
  const std::vector<analysis::TraceEntry> want = expected(q, &matched);
  const TraceQueryResult got = store_->find_traces(q);
  EXPECT_EQ(store_->last_error(), "");
  EXPECT_EQ(got.matched, matched);
  ASSERT_EQ(got.entries.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) test::expect_same_entry(got.entries[k], want[k]);
  // A query that needs a damaged row names it.
  q.filter.host = "beta";
  store_->find_traces(q);
  EXPECT_NE(store_->last_error().find("batch row 2: entries"), std::string::npos)
      << store_->last_error();
}

TEST_F(ManyBatches, EveryIdFindsItsTracesFromEveryClient) {
  for (int64_t id : {int64_t{1}, int64_t{1000}, int64_t{1365}, int64_t{kTraces / 3}}) {
    std::vector<const Input*> want;
    for (const Input& in : writer_input_) {
      if ((in.valid ? in.trace.trace_id : in.invalid.trace_id) == id) want.push_back(&in);
    }
    const std::vector<StoredTrace> got = store_->trace(id);
    EXPECT_EQ(store_->last_error(), "");
    ASSERT_EQ(got.size(), want.size()) << id;
    for (const StoredTrace& t : got) {
      EXPECT_EQ(t.entry.trace_id, id);
      EXPECT_EQ(t.executions.size(), t.entry.executions);
    }
    // Same start order as the inputs (clients 1, 2, 3 in turn).
    for (size_t k = 1; k < got.size(); ++k) EXPECT_LE(got[k - 1].entry.start, got[k].entry.start);
  }
  EXPECT_TRUE(store_->trace(kTraces).empty());  // past every id
}

}  // namespace
}  // namespace sonde::store
