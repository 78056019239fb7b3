// NativeRecordCount counts what a NativeExpander delivers to a typed sink
// (the collector's listener counts a native stream's records with it
// instead of expanding them): both get the same items here, and the counts
// must agree, item by item.
#include "format/native_record_count.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "format/native_expander.hpp"
#include "format/schema.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::format {
namespace {

// What the collector's record sink is to the expander: takes flow records
// in typed form and counts everything it is handed.
class TypedCounter final : public RecordSink, private TypedFlowSink {
 public:
  bool on_record(const Record& /*r*/) override {
    ++records;
    return true;
  }
  TypedFlowSink* typed_flow() override { return this; }
  uint64_t records = 0;

 private:
  void on_source_begin() override {}
  void on_operation(uint32_t /*id*/, std::string_view /*signature*/,
                    std::string_view /*component*/) override {}
  bool on_trace_start(const TypedTraceStart& /*start*/) override {
    ++records;
    return true;
  }
  bool on_operation_event(const TypedOperationEvent& /*event*/) override {
    ++records;
    return true;
  }
};

// Hands every item to both and checks their counts after each.
class Both {
 public:
  Both() : expander_(typed_) {
    expander_.on_meta("host", "h");
    NativeOperation op{};
    op.id = 1;
    op.name = "void work()";
    op.module = "app";
    op.kind = native::OperationKind::kFunction;
    expander_.on_operation(op);
  }
  void thread(uint32_t index) {
    const NativeThread t{index, 1000 + index, "t"};
    expander_.on_thread(t);
    count_.on_thread(t);
    check("thread " + std::to_string(index));
  }
  void event(native::EventKind kind, uint32_t thread, uint64_t trace_id = 0) {
    NativeEvent e{};
    e.kind = kind;
    e.thread = thread;
    e.time_ns = ++time_;
    e.op = 1;
    e.trace_id = trace_id;
    if (kind == native::EventKind::kLost) e.lost = 3;
    if (kind == native::EventKind::kExitFailed) e.cause = "boom";
    if (kind == native::EventKind::kTraceBegin && trace_id % 2 == 0) e.w3c = {7, 8, 9};
    expander_.on_event(e);
    count_.on_event(e);
    check("event kind " + std::to_string(static_cast<int>(kind)) + " on thread " +
          std::to_string(thread));
  }
  void record(std::string_view class_name) {
    Record r;
    reset_to_defaults(r, find_builtin_schema(class_name));
    expander_.on_record(r);
    count_.on_record(r);
    check(std::string(class_name));
  }
  uint64_t records() const { return count_.records(); }

 private:
  void check(const std::string& after) {
    ASSERT_EQ(count_.records(), typed_.records) << "after " << after;
  }
  TypedCounter typed_;
  NativeExpander expander_;
  NativeRecordCount count_;
  int64_t time_ = 0;
};

using K = native::EventKind;

TEST(NativeRecordCount, ATraceCountsItsBeginAndEachEventAndTheProcessMetadataOnce) {
  Both b;
  b.thread(0);
  b.event(K::kTraceBegin, 0, 1);
  b.event(K::kEnter, 0);
  b.event(K::kEnter, 0);
  b.event(K::kExitFailed, 0);
  b.event(K::kExit, 0);
  b.event(K::kLost, 0);
  b.event(K::kTraceBegin, 0, 2);  // with a W3C context: still one record
  b.event(K::kEnter, 0);
  b.event(K::kExit, 0);
  // Metadata 1, first trace 1 + 4, second 1 + 2; the lost marker none.
  EXPECT_EQ(b.records(), 9u);
}

TEST(NativeRecordCount, EventsBeforeAThreadsFirstTraceBeginCountAnOrphanBegin) {
  Both b;
  b.event(K::kExit, 3);   // metadata, the orphan trace's begin, the exit
  b.event(K::kEnter, 3);  // the thread is in a trace now
  b.event(K::kTraceBegin, 4, 5);
  b.event(K::kEnter, 4);
  b.event(K::kExit, 5);  // another thread's orphan
  EXPECT_EQ(b.records(), 8u);
}

TEST(NativeRecordCount, AKiekerMetadataRecordFirstTakesTheExpandersPlace) {
  Both b;
  b.record(kieker_class::kMetadata);
  b.thread(0);
  b.event(K::kTraceBegin, 0, 1);
  b.record(kieker_class::kBeforeOperation);
  EXPECT_EQ(b.records(), 3u);
}

TEST(NativeRecordCount, AHugeThreadIndexIsCountedLikeAnyOther) {
  Both b;
  b.event(K::kEnter, 4000000000u);
  b.event(K::kExit, 4000000000u);
  b.event(K::kTraceBegin, 4000000001u, 2);
  b.event(K::kEnter, 4000000001u);
  EXPECT_EQ(b.records(), 6u);
}

// Many interleaved threads, dense and sparse, every kind of item.
TEST(NativeRecordCount, RandomStreamsCountAsTheExpanderDelivers) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const uint32_t threads[] = {0, 1, 2, 70000, 3000000000u};
    Both b;
    uint64_t trace = 0;
    for (int i = 0; i < 2000; ++i) {
      const uint32_t t = threads[rng() % 5];
      switch (rng() % 9) {
        case 0:
          b.thread(t);
          break;
        case 1:
          b.event(K::kTraceBegin, t, ++trace);
          break;
        case 2:
          b.event(K::kLost, t);
          break;
        case 3:
          b.record(rng() % 4 == 0 ? kieker_class::kMetadata : kieker_class::kTraceMetadata);
          break;
        case 4:
          b.event(K::kExitFailed, t);
          break;
        case 5:
        case 6:
          b.event(K::kEnter, t);
          break;
        default:
          b.event(K::kExit, t);
          break;
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(b.records(), 2000u * 5 / 9);
  }
}

}  // namespace
}  // namespace sonde::format
