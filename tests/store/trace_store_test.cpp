// to_stored: the owned copy keeps every field of the analysis trace and
// derives the catalogue entry the way TraceCatalog does.
#include <gtest/gtest.h>

#include "store/trace_store.hpp"

namespace sonde::store {
namespace {

TEST(TraceStore, ToStoredCopiesExecutionsAndDerivesTheEntry) {
  analysis::Trace t;
  t.trace_id = 42;
  t.thread_id = 7;
  t.host = "h1";
  t.parent_trace_id = 42;
  t.executions.push_back({"void a()", "A", "h1", 100, 900, 0, 0, false, false, "", 0, 3});
  t.executions.push_back({"void b()", "B", "h1", 200, 400, 1, 1, true, false, "E: boom", 1, 2});
  const StoredTrace s = to_stored(t);
  EXPECT_EQ(s.entry.trace_id, 42);
  EXPECT_EQ(s.entry.root_operation, "void a()");
  EXPECT_EQ(s.entry.host, "h1");
  EXPECT_EQ(s.entry.thread_id, 7);
  EXPECT_EQ(s.entry.start, 100);
  EXPECT_EQ(s.entry.duration, 800);
  EXPECT_EQ(s.entry.executions, 2u);
  EXPECT_EQ(s.entry.failed, 1u);
  ASSERT_EQ(s.executions.size(), 2u);
  EXPECT_EQ(s.executions[1].operation, "void b()");
  EXPECT_EQ(s.executions[1].cause, "E: boom");
  EXPECT_EQ(s.executions[1].ess, 1);
  EXPECT_TRUE(s.executions[1].failed);
}

}  // namespace
}  // namespace sonde::store
