#include "format/kieker_tcp.hpp"

#include <gtest/gtest.h>

#include <random>

#include "format_test_support.hpp"

namespace sonde::format::kieker {
namespace {

std::string i32(int32_t v) {
  auto u = static_cast<uint32_t>(v);
  return {static_cast<char>(u >> 24), static_cast<char>(u >> 16), static_cast<char>(u >> 8),
          static_cast<char>(u)};
}

Record before(int64_t ts, int64_t order, std::string_view op) {
  Record r;
  reset_to_defaults(r, find_builtin_schema(kieker_class::kBeforeOperation));
  r.logging_timestamp = ts;
  r.values = {ts + 1, int64_t{77}, order, op, std::string_view("com.example.C")};
  return r;
}

// Owns what it receives: the decoder's strings live only as long as the decoder.
class TcpCollect : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    std::string s = r.schema->class_name + "@" + std::to_string(r.logging_timestamp);
    for (const Value& v : r.values) {
      s += "|";
      if (auto* i = std::get_if<int64_t>(&v)) s += std::to_string(*i);
      if (auto* t = std::get_if<std::string_view>(&v)) s += *t;
    }
    got.push_back(s);
    return static_cast<int>(got.size()) != stop_after;
  }
  std::vector<std::string> got;
  int stop_after = -1;
};

TEST(KiekerTcp, RegistryFramesPrecedeTheRecordThatUsesThem) {
  TcpEncoder enc;
  std::string out;
  enc.encode(before(5, 0, "op\xC3\xA9"), out);  // non-ASCII: length counts UTF-8 bytes
  const std::string cls(kieker_class::kBeforeOperation);
  size_t at = 0;
  auto expect_registry = [&](int32_t id, const std::string& s) {
    EXPECT_EQ(static_cast<int32_t>(test::big_endian_at(out, at, 4)), -1);
    EXPECT_EQ(test::big_endian_at(out, at + 4, 4), static_cast<uint64_t>(id));
    EXPECT_EQ(test::big_endian_at(out, at + 8, 4), s.size());
    EXPECT_EQ(out.substr(at + 12, s.size()), s);
    at += 12 + s.size();
  };
  expect_registry(0, cls);
  expect_registry(1, "op\xC3\xA9");
  expect_registry(2, "com.example.C");
  EXPECT_EQ(out.size() - at, 40u);  // then the record frame, laid out as in .bin
  EXPECT_EQ(test::big_endian_at(out, at, 4), 0u);
  EXPECT_EQ(test::big_endian_at(out, at + 4, 8), 5u);
  EXPECT_EQ(test::big_endian_at(out, at + 32, 4), 1u);

  std::string second;
  enc.encode(before(6, 1, "op\xC3\xA9"), second);
  EXPECT_EQ(second.size(), 40u);  // every string already sent on this connection
  EXPECT_EQ(enc.strings(), 3);
}

TEST(KiekerTcp, ByteByByteEqualsAllAtOnce) {
  TcpEncoder enc;
  std::string stream;
  for (int i = 0; i < 20; ++i) enc.encode(before(i, i, "op" + std::to_string(i % 4)), stream);

  TcpCollect whole;
  TcpDecoder a("peer-a");
  EXPECT_TRUE(a.feed(stream.data(), stream.size(), whole));
  EXPECT_TRUE(a.finish());
  EXPECT_EQ(whole.got.size(), 20u);

  TcpCollect bytes;
  TcpDecoder b("peer-b");
  for (char c : stream) ASSERT_TRUE(b.feed(&c, 1, bytes)) << b.error();
  EXPECT_TRUE(b.finish());
  EXPECT_EQ(bytes.got, whole.got);
  EXPECT_EQ(b.records(), 20u);
  EXPECT_EQ(b.offset(), stream.size());
  EXPECT_EQ(whole.got[3],
            std::string(kieker_class::kBeforeOperation) + "@3|4|77|3|op3|com.example.C");
}

std::string decode_error(const std::string& stream) {
  TcpCollect sink;
  TcpDecoder d("10.0.0.1:4711");
  if (d.feed(stream.data(), stream.size(), sink)) d.finish();
  return d.error();
}

TEST(KiekerTcp, ProtocolErrorsNamePeerOffsetAndReason) {
  const std::string cls(kieker_class::kBeforeOperation);
  const std::string reg0 = i32(-1) + i32(0) + i32(static_cast<int32_t>(cls.size())) + cls;
  const size_t off = reg0.size();
  EXPECT_EQ(
      decode_error(reg0 + i32(-1) + i32(1) + i32(-5)),
      "10.0.0.1:4711: offset " + std::to_string(off) + ": registry frame with negative length -5");
  EXPECT_EQ(decode_error(i32(-1) + i32(-3) + i32(1) + "x"),
            "10.0.0.1:4711: offset 0: registry frame with negative string id -3");
  EXPECT_NE(decode_error(i32(-1) + i32(1) + i32(17 << 20)).find("exceeds the 16777216-byte limit"),
            std::string::npos);
  EXPECT_EQ(decode_error(reg0 + i32(9) + std::string(36, '\0')),
            "10.0.0.1:4711: offset " + std::to_string(off) +
                ": record frame names class string id 9, which no registry frame has defined");
  // Record frame whose string field refers to an id never registered.
  std::string bad = reg0 + i32(0) + std::string(28, '\0') + i32(0) + i32(5);
  EXPECT_NE(decode_error(bad).find("string id 5 is not in the string registry"), std::string::npos);
  const std::string unknown = "com.example.Custom";
  EXPECT_NE(decode_error(i32(-1) + i32(0) + i32(static_cast<int32_t>(unknown.size())) + unknown +
                         i32(0) + std::string(8, '\0'))
                .find("record type com.example.Custom has no built-in schema"),
            std::string::npos);
  EXPECT_EQ(decode_error(reg0 + i32(0) + "abc"), "10.0.0.1:4711: offset " + std::to_string(off) +
                                                     ": stream ends inside a frame (7 bytes)");
}

TEST(KiekerTcp, OversizeArrayRecordIsRejectedWithoutBuffering) {
  const std::string cls =
      "kieker.common.record.flow.trace.operation.EntryLevelBeforeOperationEvent";
  std::string s = i32(-1) + i32(0) + i32(static_cast<int32_t>(cls.size())) + cls;
  s += i32(0) + std::string(8 + 8 + 8 + 4, '\0') + i32(0) + i32(0) + i32(0x7FFFFFFF) +
       std::string(8, '\0');
  EXPECT_NE(decode_error(s).find("exceeds the 16777216-byte limit"), std::string::npos)
      << decode_error(s);
}

TEST(KiekerTcp, CorruptedStreamsNeverCrash) {
  TcpEncoder enc;
  std::string stream;
  for (int i = 0; i < 30; ++i) enc.encode(before(i, i, "op" + std::to_string(i)), stream);
  std::mt19937 rng(5);
  for (int round = 0; round < 1000; ++round) {
    std::string data = stream;
    for (int k = 0; k < 3; ++k) data[rng() % data.size()] = static_cast<char>(rng());
    TcpCollect sink;
    TcpDecoder d;
    for (size_t i = 0; i < data.size(); i += 61) {
      if (!d.feed(data.data() + i, std::min<size_t>(61, data.size() - i), sink)) break;
    }
    d.finish();
    EXPECT_TRUE(d.failed() || sink.got.size() == 30u);
    EXPECT_LE(d.pending(), kMaxTcpFrame);
  }
}

TEST(KiekerTcp, SinkCanStopTheConnection) {
  TcpEncoder enc;
  std::string stream;
  for (int i = 0; i < 3; ++i) enc.encode(before(i, i, "op"), stream);
  TcpCollect sink;
  sink.stop_after = 2;
  TcpDecoder d;
  EXPECT_FALSE(d.feed(stream.data(), stream.size(), sink));
  EXPECT_TRUE(d.stopped());
  EXPECT_FALSE(d.failed());
  EXPECT_EQ(sink.got.size(), 2u);
}

}  // namespace
}  // namespace sonde::format::kieker
