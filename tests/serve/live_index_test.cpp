// The live view's cursor over an index whose traces are stored many to a
// row (store/trace_batch.hpp): a poll sees every trace stored after its
// cursor exactly once, newest first, also from a cursor inside a batch row
// and across rows.
#include "serve/live_index.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../format/format_test_support.hpp"
#include "store/index_writer.hpp"
#include "store/trace_batch.hpp"

namespace sonde::serve {
namespace {

using format::test::TempDir;

TEST(LiveIndex, ACursorSeesEachTraceOnceAcrossBatchRows) {
  TempDir dir("sonde-live-index");
  const std::string index = dir / "index.sqlite";
  LiveIndex live(index);
  NewTraces before;
  // No index yet (a collector starting): nothing new, no error.
  ASSERT_EQ(live.traces_after(0, 10, &before), "");
  EXPECT_EQ(before.count, 0u);

  constexpr int kTraces = 10'000;
  const std::string op = "shop.Order.pay()";
  {
    store::IndexWriter w(5000);  // rows of 4,096 and 904, twice
    ASSERT_EQ(w.open(dir.path()), "");
    for (int i = 0; i < kTraces; ++i) {
      analysis::Trace t;
      t.trace_id = i + 1;
      t.parent_trace_id = t.trace_id;
      t.host = "h";
      analysis::Execution e;
      e.operation = op;
      e.host = "h";
      e.tin = 1'000'000 + i;
      e.tout = e.tin + 5;
      t.executions.push_back(e);
      w.add(t, 1 + i % 2);
    }
    ASSERT_EQ(w.finish(), "");
  }
  NewTraces all;
  ASSERT_EQ(live.traces_after(0, 10, &all), "");
  EXPECT_EQ(all.count, static_cast<uint64_t>(kTraces));
  ASSERT_EQ(all.newest.size(), 10u);
  EXPECT_EQ(all.newest.front().row, all.cursor);
  EXPECT_EQ(all.newest.front().entry.trace_id, kTraces);  // the newest first
  EXPECT_EQ(all.newest.front().entry.root_operation, op);
  EXPECT_EQ(all.newest.front().client, 2);
  EXPECT_EQ(all.newest.back().entry.trace_id, kTraces - 9);

  // From a cursor inside a row: exactly the traces after it.
  NewTraces later;
  ASSERT_EQ(live.traces_after(all.newest[5].row, 100, &later), "");
  EXPECT_EQ(later.count, 5u);
  ASSERT_EQ(later.newest.size(), 5u);
  EXPECT_EQ(later.newest.back().entry.trace_id, kTraces - 4);
  EXPECT_EQ(later.cursor, all.cursor);

  NewTraces none;
  ASSERT_EQ(live.traces_after(all.cursor, 100, &none), "");
  EXPECT_EQ(none.count, 0u);
  EXPECT_TRUE(none.newest.empty());
  EXPECT_EQ(none.cursor, all.cursor);

  // The last trace of the first row as the cursor: every later row follows,
  // and walking back from the newest stops at the cursor.
  NewTraces rest;
  ASSERT_EQ(live.traces_after(store::batch_row_id(1, store::kMaxBatchTraces - 1), kTraces, &rest),
            "");
  EXPECT_EQ(rest.count, kTraces - store::kMaxBatchTraces);
  ASSERT_EQ(rest.newest.size(), kTraces - store::kMaxBatchTraces);
  EXPECT_EQ(rest.newest.back().entry.trace_id, static_cast<int64_t>(store::kMaxBatchTraces) + 1);
}

}  // namespace
}  // namespace sonde::serve
