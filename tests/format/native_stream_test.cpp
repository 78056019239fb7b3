// The native format as a stream: NativeStreamReader fed in pieces of any
// size decodes what read_native_bytes decodes; a stream restarted from a
// later chunk with the writer's kept dictionary as its preamble decodes
// that chunk's events with the same names; chunk marks count probe events.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/native_reader.hpp"
#include "format/native_writer.hpp"

namespace sonde::format {
namespace {

// Records each event as "operation name@time".
class EventList final : public NativeVisitor {
 public:
  void on_operation(const NativeOperation& op) override { names[op.id] = std::string(op.name); }
  void on_event(const NativeEvent& e) override {
    if (e.kind == native::EventKind::kEnter || e.kind == native::EventKind::kExit) {
      events.push_back(names[e.op] + "@" + std::to_string(e.time_ns));
    }
  }
  std::map<uint32_t, std::string> names;
  std::vector<std::string> events;
};

// Keeps each chunk apart with its mark, as the monitor's tcp writer does.
class ChunkSink final : public ByteSink {
 public:
  bool write(const void* data, size_t size) override {
    open.append(static_cast<const char*>(data), size);
    return true;
  }
  void end_chunk(const ChunkMark& mark) override {
    chunks.push_back(open);
    marks.push_back(mark);
    open.clear();
  }
  std::string open;
  std::vector<std::string> chunks;
  std::vector<ChunkMark> marks;
};

// Three chunks; each defines a new operation and calls it `calls` times
// (plus one trace begin, which is not a probe event).
void write_chunks(NativeWriter& w, int calls) {
  w.meta("host", "h");
  w.clock(0, 0, 1.0);
  w.thread(0, 1, "main");
  uint64_t t = 100;
  for (uint32_t op = 0; op < 3; ++op) {
    w.operation(op, "op" + std::to_string(op), native::OperationKind::kManual, "m", 0, "", 0);
    w.begin_events(0, t);
    w.trace_begin(t, op + 1, -1, -1);
    for (int i = 0; i < calls; ++i) {
      w.enter(++t, op);
      w.exit(++t, op);
    }
    w.end_events();
    w.flush(true);
  }
}

TEST(NativeStream, PiecesOfAnySizeDecodeLikeTheWhole) {
  StringSink sink;
  NativeWriter w(sink);
  ASSERT_TRUE(w.begin());
  write_chunks(w, 500);
  ASSERT_TRUE(w.finish(3000, 0));

  EventList whole;
  const NativeReadResult want = read_native_bytes(sink.bytes, whole);
  ASSERT_TRUE(want.ok) << want.error;
  ASSERT_EQ(whole.events.size(), 3000u);

  std::mt19937 random(7);
  for (const size_t max_piece : {size_t{1}, size_t{7}, size_t{4096}}) {
    EventList got;
    NativeStreamReader reader(got, "pieces");
    size_t at = 0;
    while (at < sink.bytes.size()) {
      const size_t n = std::min(sink.bytes.size() - at, 1 + random() % max_piece);
      ASSERT_TRUE(reader.feed(sink.bytes.data() + at, n)) << reader.result().error;
      at += n;
    }
    const NativeReadResult& r = reader.finish();
    EXPECT_TRUE(r.ok);
    EXPECT_TRUE(r.clean_end);
    EXPECT_FALSE(r.truncated);
    EXPECT_EQ(r.chunks, want.chunks);
    EXPECT_EQ(reader.consumed(), sink.bytes.size());
    EXPECT_EQ(got.events, whole.events);
  }

  // Cut inside the third chunk: the chunks before it decode, the rest is
  // reported as truncated with its size.
  size_t third = native::kFileHeaderSize;
  for (int c = 0; c < 2; ++c) {
    uint32_t stored = 0;
    std::memcpy(&stored, sink.bytes.data() + third + 12, 4);
    third += native::kChunkHeaderSize + stored;
  }
  EventList cut;
  NativeStreamReader reader(cut, "cut");
  ASSERT_TRUE(reader.feed(sink.bytes.data(), third + 30));
  const NativeReadResult& r = reader.finish();
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(reader.consumed(), third);
  EXPECT_EQ(r.truncated_bytes, 30u);
  EXPECT_EQ(cut.events.size(), 2000u);
}

// A reader that only counts (the collector's listener) skips converting
// the timer: the same events in the same order, each at time 0.
TEST(NativeStream, EventsWithoutTimeConversionAreTheSameEventsAtTimeZero) {
  StringSink sink;
  NativeWriter w(sink);
  ASSERT_TRUE(w.begin());
  write_chunks(w, 20);
  ASSERT_TRUE(w.finish(3000, 0));

  EventList timed;
  ASSERT_TRUE(read_native_bytes(sink.bytes, timed).ok);
  ASSERT_EQ(timed.events.size(), 120u);
  EXPECT_EQ(timed.events[1], "op0@102");  // converted: 1 ns per tick from 0

  EventList untimed;
  NativeStreamReader reader(untimed, "untimed");
  reader.convert_times(false);
  ASSERT_TRUE(reader.feed(sink.bytes.data(), sink.bytes.size())) << reader.result().error;
  const NativeReadResult& r = reader.finish();
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(untimed.events.size(), timed.events.size());
  for (size_t i = 0; i < timed.events.size(); ++i) {
    const std::string& t = timed.events[i];
    EXPECT_EQ(untimed.events[i], t.substr(0, t.find('@')) + "@0") << i;
  }
}

TEST(NativeStream, ADictionaryPreambleLetsALaterChunkDecodeAlone) {
  ChunkSink sink;
  NativeWriterOptions options;
  options.keep_dictionary = true;
  NativeWriter w(sink, options);
  write_chunks(w, 40);
  ASSERT_EQ(sink.chunks.size(), 3u);
  for (const ChunkMark& m : sink.marks) EXPECT_EQ(m.probe_events, 80u);  // not the trace begin

  // Everything, as one log.
  EventList whole;
  std::string all = NativeWriter::file_header();
  for (const std::string& c : sink.chunks) all += c;
  ASSERT_TRUE(read_native_bytes(all, whole).ok);

  // From chunk 3 on: a preamble of the definitions made up to chunk 2.
  const ChunkMark& before = sink.marks[1];
  const std::string preamble = NativeWriter::frame_chunk(
      w.dictionary().substr(0, before.dictionary_bytes), before.dictionary_items);
  EventList resumed;
  const NativeReadResult r =
      read_native_bytes(NativeWriter::file_header() + preamble + sink.chunks[2], resumed);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.chunks, 2u);
  const std::vector<std::string> tail(whole.events.end() - 80, whole.events.end());
  EXPECT_EQ(resumed.events, tail);
  EXPECT_EQ(resumed.events.front().substr(0, 4), "op2@");

  // Without it the chunk refers to strings nobody defined.
  EventList bare;
  const NativeReadResult no = read_native_bytes(NativeWriter::file_header() + sink.chunks[2], bare);
  EXPECT_FALSE(no.ok);
}

}  // namespace
}  // namespace sonde::format
