// A collector that keeps logs only counts a native stream's records on the
// listener (format::NativeRecordCount) instead of expanding them: its counts
// must be the expander's, chunk by chunk, the record sink must get nothing,
// and a chunk sink that refuses a chunk's records stops the connection
// without that chunk being stored.
#include "collect/connection_decoder.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "collector_test_support.hpp"
#include "format/native_writer.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::collect {
namespace {

// The record sink: counts what reaches it, in typed form as the
// collector's does.
class TypedCounter final : public format::RecordSink, private format::TypedFlowSink {
 public:
  bool on_record(const format::Record& /*r*/) override {
    ++records;
    return true;
  }
  format::TypedFlowSink* typed_flow() override { return this; }
  uint64_t records = 0;

 private:
  void on_source_begin() override {}
  void on_operation(uint32_t /*id*/, std::string_view /*signature*/,
                    std::string_view /*component*/) override {}
  bool on_trace_start(const format::TypedTraceStart& /*start*/) override {
    ++records;
    return true;
  }
  bool on_operation_event(const format::TypedOperationEvent& /*event*/) override {
    ++records;
    return true;
  }
};

// Takes the checked chunks, as a collector's client with a log does.
// `count_only`: asks for counts instead of records; `refuse_at`: refuses
// the records of that report (1-based; 0: none).
class Chunks final : public NativeChunkSink {
 public:
  explicit Chunks(bool count_only, size_t refuse_at = 0)
      : count_only_(count_only), refuse_at_(refuse_at) {}
  bool on_stream_header(std::string_view /*header*/) override { return true; }
  bool on_native_chunk(std::string_view /*chunk*/, uint64_t records, bool /*duplicate*/,
                       std::string_view /*definitions*/, uint32_t /*items*/) override {
    stored.push_back(records);
    return true;
  }
  bool counts_records_only() const override { return count_only_; }
  bool on_records_received(uint64_t records) override {
    received.push_back(records);
    return refuse_at_ == 0 || received.size() < refuse_at_;
  }
  std::vector<uint64_t> received, stored;

 private:
  bool count_only_;
  size_t refuse_at_;
};

// What the counts depend on: the preamble, definitions in the first data
// chunk (the process' metadata record), an exit before any trace begin
// (an orphan trace's begin), a lost marker, then one trace per chunk.
std::string varied_stream() {
  format::StringSink sink;
  format::NativeWriter w(sink, {format::native::Codec::kZstd, 1, 1u << 20, false, false});
  preamble(w, "host/1/1", "1");
  define_main_thread(w, 77);
  w.begin_events(0, 1000);
  w.exit(1001, 0);
  w.trace_begin(1002, 1, -1, -1);
  w.enter(1003, 0);
  w.lost(1004, 2);
  w.exit(1005, 0);
  w.end_events();
  w.flush(true);
  for (uint64_t trace = 2; trace <= 4; ++trace) {
    const uint64_t t = 1000 * trace;
    w.begin_events(0, t);
    w.trace_begin(t, trace, -1, -1);
    w.enter(t + 1, 0);
    w.enter(t + 2, 0);
    w.exit(t + 3, 0);
    w.exit(t + 4, 0);
    w.end_events();
    w.flush(true);
  }
  return format::NativeWriter::file_header() + sink.bytes;
}

uint64_t sum(const std::vector<uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), uint64_t{0});
}

TEST(ConnectionDecoderCounts, CountingGivesTheExpandersCountsChunkByChunk) {
  const std::string stream = varied_stream();
  TypedCounter expanded_sink, counted_sink;
  StoredChunks expanded_stored, counted_stored;
  Chunks expanded_chunks(false), counted_chunks(true);
  ConnectionDecoder expanded("a", expanded_sink, expanded_stored, &expanded_chunks);
  ConnectionDecoder counted("b", counted_sink, counted_stored, &counted_chunks);
  ASSERT_TRUE(expanded.feed(stream.data(), stream.size())) << expanded.error();
  ASSERT_TRUE(counted.feed(stream.data(), stream.size())) << counted.error();
  ASSERT_TRUE(expanded.finish()) << expanded.error();
  ASSERT_TRUE(counted.finish()) << counted.error();

  // Metadata 1; chunk 1: orphan begin + exit, begin + 2 events; then 5 a chunk.
  EXPECT_EQ(expanded_sink.records, 1 + 2 + 3 + 3 * 5u);
  EXPECT_EQ(counted.records(), expanded.records());
  EXPECT_EQ(counted.records(), expanded_sink.records);
  EXPECT_EQ(counted_chunks.stored, expanded_chunks.stored);  // the preamble's 0 too
  EXPECT_EQ(counted_chunks.received, (std::vector<uint64_t>{6, 5, 5, 5}));
  EXPECT_EQ(sum(counted_chunks.received), counted.records());
  EXPECT_EQ(counted_sink.records, 0u) << "counted, not delivered";
  EXPECT_TRUE(expanded_chunks.received.empty());
  EXPECT_EQ(counted.chunks(), expanded.chunks());
}

TEST(ConnectionDecoderCounts, ARefusedChunkStopsTheConnectionAndIsNotStored) {
  const std::string stream = varied_stream();
  TypedCounter sink;
  StoredChunks stored;
  Chunks chunks(true, /*refuse_at=*/2);
  ConnectionDecoder decoder("c", sink, stored, &chunks);
  EXPECT_FALSE(decoder.feed(stream.data(), stream.size()));
  EXPECT_TRUE(decoder.stopped());
  EXPECT_FALSE(decoder.failed()) << decoder.error();
  // The preamble and the first data chunk stored; the second's records
  // received (reported) but the chunk not stored, nothing after it.
  EXPECT_EQ(chunks.stored, (std::vector<uint64_t>{0, 6}));
  EXPECT_EQ(chunks.received, (std::vector<uint64_t>{6, 5}));
  EXPECT_EQ(decoder.records(), 11u);
}

}  // namespace
}  // namespace sonde::collect
