// IndexWriter finds a name's id first by where the name's text lies
// (index_writer.hpp): a trace's names are views into its client's interned
// strings. When that memory later holds other text of the same length, as
// after a client's strings were freed and reused, the writer must store the
// new text, never the id of what was there before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../format/format_test_support.hpp"
#include "store/index_writer.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {
namespace {

using format::test::TempDir;

analysis::Trace one_call(int64_t id, std::string_view operation) {
  analysis::Trace trace;
  trace.trace_id = id;
  trace.thread_id = 1;
  trace.parent_trace_id = id;
  trace.host = "h";
  trace.executions.push_back(
      {operation, "C", "h", 1000 * id, 1000 * id + 10, 0, 0, false, false, "", -1, -1});
  return trace;
}

TEST(IndexWriterNames, TextReplacedAtTheSameAddressIsStoredAsTheNewText) {
  TempDir dir("sonde-names");
  // One buffer, rewritten in place between the traces: same address, same
  // length, other text each time.
  std::string buffer = "first()";
  const std::vector<std::string> texts = {"first()", "other()", "first()", "third()"};
  {
    IndexWriter w;
    ASSERT_EQ(w.open(dir.path()), "");
    for (size_t i = 0; i < texts.size(); ++i) {
      buffer.replace(0, buffer.size(), texts[i]);
      w.add(one_call(static_cast<int64_t>(i + 1), buffer), 0);
    }
    ASSERT_EQ(w.finish(), "");
  }
  std::string error;
  auto store = SqliteStore::open(dir.path(), &error);
  ASSERT_NE(store, nullptr) << error;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<StoredTrace> got = store->trace(static_cast<int64_t>(i + 1));
    ASSERT_EQ(got.size(), 1u) << "trace " << i + 1;
    ASSERT_EQ(got[0].executions.size(), 1u);
    EXPECT_EQ(got[0].executions[0].operation, texts[i]) << "trace " << i + 1;
  }
  // The statistics count each text's calls, not the first text's.
  uint64_t first = 0, others = 0;
  for (const OperationStats& s : store->operations()) {
    (s.operation == "first()" ? first : others) += s.count;
  }
  EXPECT_EQ(first, 2u);
  EXPECT_EQ(others, 2u);
}

}  // namespace
}  // namespace sonde::store
