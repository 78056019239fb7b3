// The native format's event blocks, written by NativeWriter and read back by
// the reader: every event kind and field survives, with every codec, across
// blocks and chunks; version 1 files (interleaved times) stay readable; a
// corrupt block is an error, not a crash.
// Over 500 lines: the cases share one generator of events with every
// field width and one encoder of hand-made blocks; the stream reader's
// tests are in native_stream_test.cpp.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "all_types_schema.hpp"
#include "format/byte_sink.hpp"
#include "format/native_reader.hpp"
#include "format/native_writer.hpp"
#include "format/varint.hpp"

namespace sonde::format {
namespace {

using native::EventKind;

struct Ev {
  EventKind kind;
  uint32_t thread = 0;
  uint64_t tsc = 0;
  uint32_t op = 0;
  std::string cause;
  uint64_t trace_id = 0;
  int64_t parent_trace_id = -1;
  int32_t parent_order_id = -1;
  uint64_t lost = 0;
  w3c::Context w3c;  // trace begin
  bool operator==(const Ev&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Ev& e) {
  return os << "{kind " << static_cast<int>(e.kind) << " thread " << e.thread << " tsc " << e.tsc
            << " op " << e.op << " cause '" << e.cause << "' trace " << e.trace_id << " parent "
            << e.parent_trace_id << "/" << e.parent_order_id << " lost " << e.lost << " w3c "
            << e.w3c.trace_id_high << "/" << e.w3c.trace_id_low << "/" << e.w3c.parent_span_id
            << "}";
}

Ev call(EventKind kind, uint32_t thread, uint64_t tsc, uint32_t op, std::string cause = "") {
  Ev e{kind, thread, tsc, op, std::move(cause), 0, -1, -1, 0, {}};
  return e;
}
Ev trace(uint32_t thread, uint64_t tsc, uint64_t id, int64_t parent, int32_t order,
         w3c::Context w3c = {}) {
  Ev e{EventKind::kTraceBegin, thread, tsc, 0, "", id, parent, order, 0, w3c};
  return e;
}
Ev lost(uint32_t thread, uint64_t tsc, uint64_t n) {
  Ev e{EventKind::kLost, thread, tsc, 0, "", 0, -1, -1, n, {}};
  return e;
}

class NativeCollect : public NativeVisitor {
 public:
  void on_event(const NativeEvent& e) override {
    Ev c = call(e.kind, e.thread, e.tsc, 0);
    switch (e.kind) {
      case EventKind::kEnter:
      case EventKind::kExit:
        c.op = e.op;
        break;
      case EventKind::kExitFailed:
        c.op = e.op;
        c.cause = std::string(e.cause);
        break;
      case EventKind::kTraceBegin:
        c.trace_id = e.trace_id;
        c.parent_trace_id = e.parent_trace_id;
        c.parent_order_id = e.parent_order_id;
        c.w3c = e.w3c;
        break;
      case EventKind::kLost:
        c.lost = e.lost;
        break;
      case EventKind::kTraceContext:
        ADD_FAILURE() << "a trace context is delivered with its trace begin, not as an event";
        break;
    }
    events.push_back(c);
  }
  std::vector<Ev> events;
};

// Events with every kind and with fields of every varint width: time deltas
// of 0, 1 byte and many bytes, operations below and above 16 (one- and
// two-byte event heads), large trace ids, parents and none, a W3C trace
// context sonde did not start.
std::vector<Ev> sample_events(uint32_t thread) {
  std::vector<Ev> v;
  uint64_t t = 1000;
  v.push_back(trace(thread, t, 0x123456789abcULL, -1, -1));
  v.push_back(call(EventKind::kEnter, thread, t, 3));
  v.push_back(call(EventKind::kEnter, thread, t += 5, 17));
  v.push_back(call(EventKind::kEnter, thread, t += 200, 4000000));
  v.push_back(call(EventKind::kExit, thread, t += 1ULL << 40, 4000000));
  v.push_back(
      call(EventKind::kExitFailed, thread, t += 127, 17, "std::runtime_error: out of stock"));
  v.push_back(lost(thread, t += 128, 42));
  v.push_back(call(EventKind::kExit, thread, t, 3));
  v.push_back(trace(thread, t += 9, ~0ULL >> 1, 77, 5,
                    {0x4bf92f3577b34da6ULL, 0xa3ce929d0e0e4736ULL, 0x00f067aa0ba902b7ULL}));
  v.push_back(call(EventKind::kEnter, thread, t, 0));
  v.push_back(call(EventKind::kExit, thread, t += 1, 0));
  return v;
}

void write_events(NativeWriter& w, const std::vector<Ev>& events) {
  w.begin_events(events[0].thread, events[0].tsc);
  for (const Ev& e : events) {
    switch (e.kind) {
      case EventKind::kEnter:
        w.enter(e.tsc, e.op);
        break;
      case EventKind::kExit:
        w.exit(e.tsc, e.op);
        break;
      case EventKind::kExitFailed:
        w.exit_failed(e.tsc, e.op, w.string_id(e.cause));
        break;
      case EventKind::kTraceBegin:
        w.trace_begin(e.tsc, e.trace_id, e.parent_trace_id, e.parent_order_id, e.w3c);
        break;
      case EventKind::kLost:
        w.lost(e.tsc, e.lost);
        break;
      case EventKind::kTraceContext:
        break;
    }
  }
  w.end_events();
}

class NativeEventBlocks : public ::testing::TestWithParam<native::Codec> {};

TEST_P(NativeEventBlocks, EveryKindAndFieldRoundTripsAcrossBlocksAndChunks) {
  StringSink sink;
  NativeWriterOptions options;
  options.codec = GetParam();
  options.chunk_target = 64;  // a chunk per block or two
  NativeWriter w(sink, options);
  ASSERT_TRUE(w.begin());
  w.clock(0, 0, 1.0);
  w.thread(0, 100, "main");
  w.thread(1, 101, "worker");
  std::vector<Ev> expected;
  for (int round = 0; round < 20; ++round) {
    for (uint32_t thread = 0; thread < 2; ++thread) {
      std::vector<Ev> block = sample_events(thread);
      for (Ev& e : block) e.tsc += static_cast<uint64_t>(round) << 44;
      write_events(w, block);
      expected.insert(expected.end(), block.begin(), block.end());
      w.flush(false);
    }
  }
  ASSERT_TRUE(w.finish(expected.size(), 0));
  EXPECT_GT(w.chunks_written(), 10u);
  NativeCollect c;
  NativeReadResult r = read_native_bytes(sink.bytes, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.version, native::kVersion);
  EXPECT_TRUE(r.clean_end);
  EXPECT_EQ(r.events, expected.size());
  ASSERT_EQ(c.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(c.events[i], expected[i]) << "event " << i;
}

// Generic records (what Kieker's protocol and the samplers write): every
// field type, at the ends of its range, strings short and long, new and
// repeated, arrays empty and not, across chunks; read back value for value.
// A cursor decodes a varint with a whole varint's room after it without
// checking each byte's bound, and one nearer the end with the check: both
// must give the same values, and fail on the same malformed bytes.
TEST(ByteCursor, VarintsDecodeAlikeFarFromAndAtTheEnd) {
  std::vector<uint64_t> values = {
      0, 1, 127, 128, 16383, 16384, std::numeric_limits<uint64_t>::max()};
  for (int bits = 7; bits < 64; bits += 7) {
    values.push_back((uint64_t{1} << bits) - 1);
    values.push_back(uint64_t{1} << bits);
  }
  const auto decode = [](const std::string& bytes, size_t padding) {
    const std::string buffer = bytes + std::string(padding, '\x55');
    ByteCursor c{reinterpret_cast<const uint8_t*>(buffer.data()),
                 reinterpret_cast<const uint8_t*>(buffer.data() + buffer.size())};
    const uint64_t v = c.varint();
    const size_t read = static_cast<size_t>(c.p - reinterpret_cast<const uint8_t*>(buffer.data()));
    return std::make_tuple(v, c.ok, c.ok ? read : bytes.size());
  };
  for (uint64_t v : values) {
    std::string bytes;
    put_varint(bytes, v);
    SCOPED_TRACE(v);
    EXPECT_EQ(decode(bytes, 0), std::make_tuple(v, true, bytes.size()));
    EXPECT_EQ(decode(bytes, kMaxVarintBytes), std::make_tuple(v, true, bytes.size()));
    // Cut short: an error at the end, another varint's bytes further in.
    if (bytes.size() > 1) {
      EXPECT_FALSE(std::get<1>(decode(bytes.substr(0, bytes.size() - 1), 0)));
    }
  }
  // Eleven bytes: not a varint, wherever it is.
  const std::string overlong = std::string(10, '\x80') + '\x01';
  EXPECT_FALSE(std::get<1>(decode(overlong, 0)));
  EXPECT_FALSE(std::get<1>(decode(overlong, kMaxVarintBytes)));
  // A tenth byte whose bits lie beyond 64: both keep bit 63 alike.
  const std::string wide = std::string(9, '\xff') + '\x7f';
  EXPECT_EQ(decode(wide, 0), decode(wide, kMaxVarintBytes));
  EXPECT_TRUE(std::get<1>(decode(wide, 0)));
}

TEST(NativeRecords, EveryFieldTypeRoundTripsAtTheEndsOfItsRange) {
  const RecordSchema& schema = testing::kAllTypes;  // one field of every type
  const std::string long_text(300, 'x');
  const std::vector<std::string> texts = {
      "", "short", "a.b.C.operation(int, double) with a long name", long_text};
  std::vector<std::vector<Value>> expected;
  for (int i = 0; i < 200; ++i) {
    // Both ends exactly (i = 0 and 1), then values near them.
    const int64_t wide = i % 2 ? std::numeric_limits<int64_t>::max() - (i - 1)
                               : std::numeric_limits<int64_t>::min() + i;
    std::vector<std::string_view> list;
    for (int k = 0; k < i % 4; ++k) list.push_back(texts[(i + k) % texts.size()]);
    const int64_t narrow = i % 3 == 0   ? std::numeric_limits<int32_t>::min()
                           : i % 3 == 1 ? std::numeric_limits<int32_t>::max()
                                        : -i;
    expected.push_back(
        {narrow, wide, i % 5 ? -1.5e300 * i : 4.9e-324, 3.25f * static_cast<float>(i), i % 2 == 0,
         std::string_view(texts[i % texts.size()]), int64_t{i % 2 ? 127 - i % 128 : -128 + i % 128},
         int64_t{i % 2 ? 32767 - i : -32768 + i}, int64_t{'a' + i % 26}, list});
  }
  // -1 (unset), negatives and both ends of the range (10-byte varints).
  auto timestamp_of = [](size_t i) -> int64_t {
    if (i == 7) return std::numeric_limits<int64_t>::min();
    if (i == 8) return std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(i) - 5;
  };
  StringSink sink;
  NativeWriterOptions options;
  options.chunk_target = 256;  // records spread over many chunks
  NativeWriter w(sink, options);
  ASSERT_TRUE(w.begin());
  for (size_t i = 0; i < expected.size(); ++i) {
    Record r;
    r.schema = &schema;
    r.logging_timestamp = timestamp_of(i);
    r.values = expected[i];
    w.record(r);
    ASSERT_TRUE(w.flush(false));  // cuts a chunk once past chunk_target, as the writers do
  }
  ASSERT_TRUE(w.finish(0, 0));
  EXPECT_GT(w.chunks_written(), 5u);

  struct Collect : NativeVisitor {
    void on_record(const Record& r) override {
      timestamps.push_back(r.logging_timestamp);
      std::vector<std::string> row;
      for (const Value& v : r.values) row.push_back(text_of(v));
      rows.push_back(row);
    }
    static std::string text_of(const Value& v) {
      if (auto* i = std::get_if<int64_t>(&v)) return "i" + std::to_string(*i);
      if (auto* d = std::get_if<double>(&v)) {  // every bit: hexadecimal
        char hex[64];
        std::snprintf(hex, sizeof hex, "d%a", *d);
        return hex;
      }
      if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
      if (auto* s = std::get_if<std::string_view>(&v)) return "s" + std::string(*s);
      std::string joined = "[";
      for (std::string_view e : std::get<std::vector<std::string_view>>(v)) {
        joined += std::string(e) + "|";
      }
      return joined + "]";
    }
    std::vector<int64_t> timestamps;
    std::vector<std::vector<std::string>> rows;
  } c;
  const NativeReadResult r = read_native_bytes(sink.bytes, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.rows.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(c.timestamps[i], timestamp_of(i)) << "record " << i;
    ASSERT_EQ(c.rows[i].size(), expected[i].size()) << "record " << i;
    for (size_t f = 0; f < expected[i].size(); ++f) {
      EXPECT_EQ(c.rows[i][f], Collect::text_of(expected[i][f]))
          << "record " << i << " field " << schema.fields[f].name;
    }
  }
}

// The writer finds a string's id first by where its text lies (a
// collector's decoded records point into the connection's registry). Text
// rewritten in place, same address and length, is a new string, not the
// id of what was there before.
TEST(NativeRecords, TextRewrittenAtTheSameAddressIsWrittenAsTheNewText) {
  const RecordSchema schema{"test.OneString", {{"s", FieldType::kString}}};
  const std::vector<std::string> texts = {"first()", "other()", "first()", "third()"};
  std::string buffer = texts[0];
  StringSink sink;
  NativeWriter w(sink, NativeWriterOptions{});
  ASSERT_TRUE(w.begin());
  for (const std::string& text : texts) {
    buffer.replace(0, buffer.size(), text);
    Record r;
    r.schema = &schema;
    r.values = {std::string_view(buffer)};
    w.record(r);
  }
  ASSERT_TRUE(w.finish(0, 0));
  struct Collect : NativeVisitor {
    void on_record(const Record& r) override {
      texts.emplace_back(std::get<std::string_view>(r.values.at(0)));
    }
    std::vector<std::string> texts;
  } c;
  const NativeReadResult r = read_native_bytes(sink.bytes, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(c.texts, texts);
}

// The writer finds a schema's id by the schema's serial. A schema freed
// and another made in its place (same address, other fields) is a new
// schema: its records are written against their own definition.
TEST(NativeRecords, ASchemaMadeWhereAFreedOneLayIsWrittenAsItself) {
  alignas(RecordSchema) unsigned char storage[sizeof(RecordSchema)];
  StringSink sink;
  NativeWriter w(sink, NativeWriterOptions{});
  ASSERT_TRUE(w.begin());
  auto* first = new (storage) RecordSchema{"test.First", {{"n", FieldType::kInt64}}};
  Record r;
  r.schema = first;
  r.values = {int64_t{7}};
  w.record(r);
  first->~RecordSchema();
  auto* second = new (storage)
      RecordSchema{"test.Second", {{"s", FieldType::kString}, {"d", FieldType::kDouble}}};
  ASSERT_EQ(static_cast<void*>(second), static_cast<void*>(first));
  r.schema = second;
  r.values = {std::string_view("text"), 2.5};
  w.record(r);
  second->~RecordSchema();
  ASSERT_TRUE(w.finish(0, 0));
  struct Collect : NativeVisitor {
    void on_record(const Record& r) override {
      classes.push_back(r.schema->class_name);
      values.push_back(r.values.size());
      if (r.schema->class_name == "test.Second") {
        text = std::string(std::get<std::string_view>(r.values.at(0)));
        number = std::get<double>(r.values.at(1));
      }
    }
    std::vector<std::string> classes;
    std::vector<size_t> values;
    std::string text;
    double number = 0;
  } c;
  const NativeReadResult read = read_native_bytes(sink.bytes, c);
  ASSERT_TRUE(read.ok) << read.error;
  EXPECT_EQ(c.classes, (std::vector<std::string>{"test.First", "test.Second"}));
  EXPECT_EQ(c.values, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(c.text, "text");
  EXPECT_EQ(c.number, 2.5);
}

TEST_P(NativeEventBlocks, CursorEncodingMatchesTheOneEventCalls) {
  // The writer thread's path: room reserved once, events through a copy of
  // the cursor, committed; the same bytes as one call per event.
  std::vector<Ev> events = sample_events(0);
  StringSink a, b;
  NativeWriterOptions options;
  options.codec = GetParam();
  NativeWriter wa(a, options), wb(b, options);
  for (NativeWriter* w : {&wa, &wb}) {
    ASSERT_TRUE(w->begin());
    w->clock(0, 0, 1.0);
  }
  uint32_t cause = wa.string_id(events[5].cause);
  ASSERT_EQ(wb.string_id(events[5].cause), cause);
  write_events(wa, events);
  wb.begin_events(0, events[0].tsc);
  NativeWriter::BlockCursor cursor = wb.reserve_block(events.size());
  for (const Ev& e : events) {
    switch (e.kind) {
      case EventKind::kEnter:
      case EventKind::kExit:
        cursor.event(e.tsc, e.kind, e.op);
        break;
      case EventKind::kExitFailed:
        cursor.exit_failed(e.tsc, e.op, cause);
        break;
      case EventKind::kTraceBegin:
        if (e.w3c.present()) cursor.trace_context(e.tsc, e.w3c);
        cursor.trace_begin(e.tsc, e.trace_id, e.parent_trace_id, e.parent_order_id);
        break;
      case EventKind::kLost:
        cursor.lost(e.tsc, e.lost);
        break;
      case EventKind::kTraceContext:
        break;
    }
  }
  wb.commit_block(cursor);
  wb.end_events();
  ASSERT_TRUE(wa.finish(events.size(), 0));
  ASSERT_TRUE(wb.finish(events.size(), 0));
  EXPECT_EQ(a.bytes, b.bytes);
}

INSTANTIATE_TEST_SUITE_P(Codecs, NativeEventBlocks,
                         ::testing::Values(native::Codec::kNone, native::Codec::kZstd,
                                           native::Codec::kLz4),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case native::Codec::kZstd:
                               return std::string("zstd");
                             case native::Codec::kLz4:
                               return std::string("lz4");
                             default:
                               return std::string("none");
                           }
                         });

TEST(NativeEventBlocks, TimeGoingBackwardsIsStoredAsZeroDelta) {
  StringSink sink;
  NativeWriter w(sink, {native::Codec::kNone, 1, 1u << 20});
  ASSERT_TRUE(w.begin());
  w.clock(0, 0, 1.0);
  w.begin_events(0, 500);
  w.enter(500, 1);
  w.exit(400, 1);  // e.g. a CLOCK_MONOTONIC step seen across cores
  w.end_events();
  ASSERT_TRUE(w.finish(2, 0));
  NativeCollect c;
  ASSERT_TRUE(read_native_bytes(sink.bytes, c).ok);
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].tsc, 500u);
}

// A thread's buffer can reach the log after a newer calibration: its events
// are converted with the calibration whose range they fall in, so a trace
// split across the two calibrations keeps its order.
TEST(NativeEventBlocks, EventsAreConvertedWithTheCalibrationTheirTimeFallsIn) {
  struct Times : NativeVisitor {
    std::vector<int64_t> ns;
    void on_event(const NativeEvent& e) override { ns.push_back(e.time_ns); }
  };
  StringSink sink;
  NativeWriter w(sink, {native::Codec::kNone, 1, 1u << 20});
  ASSERT_TRUE(w.begin());
  w.clock(0, 1000, 1.0);
  w.begin_events(0, 100);
  w.enter(100, 1);  // 1,100 ns
  w.end_events();
  // From tick 1,000 on: 2 ns per tick, anchored where the first one is.
  w.clock(1000, 2000, 2.0);
  w.begin_events(0, 200);
  w.exit(200, 1);    // recorded before tick 1,000: the first calibration, 1,200 ns
  w.enter(1500, 2);  // after: 2,000 + 500 x 2 = 3,000 ns
  w.end_events();
  // A calibration read out of order (an older one later in the file) is
  // put in its place.
  w.clock(500, 1500, 1.0);
  w.begin_events(0, 1600);
  w.exit(1600, 2);  // 2,000 + 600 x 2 = 3,200 ns
  w.end_events();
  w.begin_events(1, 600);
  w.enter(600, 3);  // the out-of-order one's range: 1,500 + 100 = 1,600 ns
  w.end_events();
  ASSERT_TRUE(w.finish(5, 0));
  Times t;
  NativeReadResult r = read_native_bytes(sink.bytes, t);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(t.ns, (std::vector<int64_t>{1100, 1200, 3000, 3200, 1600}));
}

// A version 1 file, byte by byte as the version 1 writer laid it out:
// each event's time delta shifted left by three with its kind, then its op.
std::string version1_file(const std::vector<Ev>& events) {
  std::string p;
  auto item = [&](native::Tag t) { p.push_back(static_cast<char>(t)); };
  uint32_t items = 0;
  item(native::Tag::kClock), ++items;
  put_varint(p, 0);
  put_varint(p, 0);
  double one = 1.0;
  p.append(reinterpret_cast<const char*>(&one), 8);
  item(native::Tag::kString), ++items;
  put_varint(p, 0);
  put_str(p, events[5].cause);
  item(native::Tag::kEvents), ++items;
  put_varint(p, 0);
  put_varint(p, events.size());
  put_varint(p, events[0].tsc);
  uint64_t last = events[0].tsc;
  for (const Ev& e : events) {
    put_varint(p, (e.tsc - last) << 3 | static_cast<uint64_t>(e.kind));
    last = e.tsc;
    switch (e.kind) {
      case EventKind::kEnter:
      case EventKind::kExit:
        put_varint(p, e.op);
        break;
      case EventKind::kExitFailed:
        put_varint(p, e.op);
        put_varint(p, 0);
        break;
      case EventKind::kTraceBegin:
        put_varint(p, e.trace_id);
        put_varint(p, zigzag(e.parent_trace_id));
        put_varint(p, zigzag(e.parent_order_id));
        break;
      case EventKind::kLost:
        put_varint(p, e.lost);
        break;
      case EventKind::kTraceContext:
        break;
    }
  }
  item(native::Tag::kEnd), ++items;
  put_varint(p, events.size());
  put_varint(p, 0);
  std::string file(native::kFileMagic);
  uint16_t version = 1, flags = 0;
  uint32_t reserved = 0;
  file.append(reinterpret_cast<const char*>(&version), 2);
  file.append(reinterpret_cast<const char*>(&flags), 2);
  file.append(reinterpret_cast<const char*>(&reserved), 4);
  auto u32 = [&](uint32_t v) { file.append(reinterpret_cast<const char*>(&v), 4); };
  u32(native::kChunkMagic);
  file.append(4, '\0');  // codec none, reserved
  u32(static_cast<uint32_t>(p.size()));
  u32(static_cast<uint32_t>(p.size()));
  u32(items);
  u32(static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(p.data()), static_cast<uInt>(p.size()))));
  return file + p;
}

TEST(NativeEventBlocks, Version1FilesStayReadable) {
  std::vector<Ev> events = sample_events(0);
  for (Ev& e : events) e.w3c = {};  // version 1 predates trace contexts
  NativeCollect c;
  NativeReadResult r = read_native_bytes(version1_file(events), c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.version, 1);
  EXPECT_TRUE(r.clean_end);
  ASSERT_EQ(c.events.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(c.events[i], events[i]) << "event " << i;
}

TEST(NativeEventBlocks, NewerVersionIsRejectedByName) {
  std::string file = version1_file(sample_events(0));
  uint16_t future = native::kVersion + 1;
  std::memcpy(file.data() + 8, &future, 2);
  NativeCollect c;
  NativeReadResult r = read_native_bytes(file, c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("unsupported native format version"), std::string::npos) << r.error;
}

TEST(NativeEventBlocks, CorruptTimeStreamLengthIsAnErrorNotACrash) {
  StringSink sink;
  NativeWriter w(sink, {native::Codec::kNone, 1, 1u << 20});
  ASSERT_TRUE(w.begin());
  w.clock(0, 0, 1.0);
  write_events(w, sample_events(0));
  ASSERT_TRUE(w.finish(11, 0));
  // Every byte of the payload in turn set to 0xff: the reader may reject the
  // chunk (the CRC is recomputed so it gets that far) but must not crash or
  // read out of bounds (the sanitizer build checks the latter).
  size_t payload = native::kFileHeaderSize + native::kChunkHeaderSize;
  for (size_t i = payload; i < sink.bytes.size(); ++i) {
    std::string bad = sink.bytes;
    bad[i] = static_cast<char>(0xff);
    uint32_t crc =
        static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(bad.data() + payload),
                                    static_cast<uInt>(bad.size() - payload)));
    std::memcpy(bad.data() + native::kFileHeaderSize + 20, &crc, 4);
    NativeCollect c;
    NativeReadResult r = read_native_bytes(bad, c);
    if (!r.ok) {
      EXPECT_FALSE(r.error.empty());
    }
  }
}

}  // namespace
}  // namespace sonde::format
