// Asks two TraceStores the same questions and expects the same answers:
// the SQLite store and the ClickHouse store built from the same traces.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "store/trace_store.hpp"

namespace sonde::store::test {

inline void expect_same_entry(const analysis::TraceEntry& a, const analysis::TraceEntry& b) {
  EXPECT_EQ(a.trace_id, b.trace_id);
  EXPECT_EQ(a.root_operation, b.root_operation);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.thread_id, b.thread_id);
  EXPECT_EQ(a.parent_trace_id, b.parent_trace_id);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.duration, b.duration);
  EXPECT_EQ(a.executions, b.executions);
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.problem, b.problem);
}

// The searches the UI makes: every filter alone and combined, both orders, pages.
inline std::vector<TraceQuery> ui_queries(const StoreInfo& info, const std::string& operation) {
  std::vector<TraceQuery> qs;
  auto add = [&](auto change) {
    for (const auto order : {analysis::TraceOrder::kStart, analysis::TraceOrder::kLongest}) {
      TraceQuery q;
      q.order = order;
      q.limit = 1'000'000;
      change(q);
      qs.push_back(q);
    }
  };
  add([](TraceQuery&) {});
  add([](TraceQuery& q) { q.limit = 25, q.offset = 50; });
  add([](TraceQuery& q) { q.filter.include_invalid = true; });
  add([](TraceQuery& q) { q.filter.only_invalid = true; });
  add([](TraceQuery& q) { q.filter.only_failed = true; });
  add([&](TraceQuery& q) { q.filter.operation = operation; });
  add([](TraceQuery& q) { q.filter.operation = "no such operation"; });
  for (const std::string& host : info.hosts) add([&](TraceQuery& q) { q.filter.host = host; });
  add([](TraceQuery& q) { q.filter.min_duration = 3'000'000, q.filter.max_duration = 9'000'000; });
  const int64_t mid = info.first_start + (info.last_start - info.first_start) / 2;
  add([&](TraceQuery& q) { q.from_ns = info.first_start, q.to_ns = mid; });
  add([&](TraceQuery& q) { q.from_ns = mid, q.limit = 7, q.offset = 3; });
  return qs;
}

inline void expect_same_operations(const std::vector<OperationStats>& got,
                                   const std::vector<OperationStats>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].operation);
    EXPECT_EQ(got[i].operation, want[i].operation);
    EXPECT_EQ(got[i].count, want[i].count);
    EXPECT_EQ(got[i].failed, want[i].failed);
    EXPECT_EQ(got[i].min, want[i].min);
    EXPECT_EQ(got[i].max, want[i].max);
    EXPECT_DOUBLE_EQ(got[i].mean, want[i].mean);
    EXPECT_DOUBLE_EQ(got[i].p50, want[i].p50);
    EXPECT_DOUBLE_EQ(got[i].p90, want[i].p90);
    EXPECT_DOUBLE_EQ(got[i].p95, want[i].p95);
    EXPECT_DOUBLE_EQ(got[i].p99, want[i].p99);
  }
}

inline void expect_same_answers(TraceStore& a, TraceStore& b, const std::string& operation) {
  const StoreInfo ia = a.info(), ib = b.info();
  EXPECT_EQ(ia.traces, ib.traces);
  EXPECT_EQ(ia.invalid_traces, ib.invalid_traces);
  EXPECT_EQ(ia.executions, ib.executions);
  EXPECT_EQ(ia.first_start, ib.first_start);
  EXPECT_EQ(ia.last_start, ib.last_start);
  EXPECT_EQ(ia.hosts, ib.hosts);

  const std::vector<TraceQuery> queries = ui_queries(ia, operation);
  for (size_t i = 0; i < queries.size(); ++i) {
    SCOPED_TRACE("query " + std::to_string(i));
    const TraceQueryResult ra = a.find_traces(queries[i]), rb = b.find_traces(queries[i]);
    EXPECT_EQ(ra.matched, rb.matched);
    ASSERT_EQ(ra.entries.size(), rb.entries.size());
    for (size_t k = 0; k < ra.entries.size(); ++k) expect_same_entry(ra.entries[k], rb.entries[k]);
  }

  TraceQuery sample;
  sample.filter.include_invalid = true;
  sample.limit = 40;
  for (const auto& e : a.find_traces(sample).entries) {
    const auto ta = a.trace(e.trace_id), tb = b.trace(e.trace_id);
    ASSERT_EQ(ta.size(), tb.size());
    for (size_t k = 0; k < ta.size(); ++k) {
      expect_same_entry(ta[k].entry, tb[k].entry);
      ASSERT_EQ(ta[k].executions.size(), tb[k].executions.size());
      for (size_t x = 0; x < ta[k].executions.size(); ++x) {
        const StoredExecution &ea = ta[k].executions[x], &eb = tb[k].executions[x];
        EXPECT_EQ(ea.operation, eb.operation);
        EXPECT_EQ(ea.component, eb.component);
        EXPECT_EQ(ea.host, eb.host);
        EXPECT_EQ(ea.tin, eb.tin);
        EXPECT_EQ(ea.tout, eb.tout);
        EXPECT_EQ(ea.eoi, eb.eoi);
        EXPECT_EQ(ea.ess, eb.ess);
        EXPECT_EQ(ea.failed, eb.failed);
        EXPECT_EQ(ea.cause, eb.cause);
      }
    }
  }

  expect_same_operations(a.operations(), b.operations());
  const auto ea = a.call_edges(), eb = b.call_edges();
  ASSERT_EQ(ea.size(), eb.size());
  for (size_t i = 0; i < ea.size(); ++i) {
    EXPECT_EQ(ea[i].caller, eb[i].caller);
    EXPECT_EQ(ea[i].callee, eb[i].callee);
    EXPECT_EQ(ea[i].calls, eb[i].calls);
  }
}

}  // namespace sonde::store::test
