#include "format/kieker_dat.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "all_types_schema.hpp"

namespace sonde::format::kieker {
namespace {


using testing::kAllTypes;


std::string java(double v) {
  std::string s;
  append_java_double(s, v);
  return s;
}

std::string java_f(float v) {
  std::string s;
  append_java_float(s, v);
  return s;
}

TEST(KiekerDat, DoublesAreFormattedAsJavaDoubleToString) {
  EXPECT_EQ(java(1.0), "1.0");
  EXPECT_EQ(java(0.1), "0.1");
  EXPECT_EQ(java(0.001), "0.001");
  EXPECT_EQ(java(0.0001), "1.0E-4");
  EXPECT_EQ(java(100.0), "100.0");
  EXPECT_EQ(java(123.456), "123.456");
  EXPECT_EQ(java(1234567.0), "1234567.0");
  EXPECT_EQ(java(9999999.0), "9999999.0");
  EXPECT_EQ(java(1e7), "1.0E7");
  EXPECT_EQ(java(12345678.9), "1.23456789E7");
  EXPECT_EQ(java(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(java(2e23), "2.0E23");
  EXPECT_EQ(java(-1.5e-10), "-1.5E-10");
  EXPECT_EQ(java(std::numeric_limits<double>::max()), "1.7976931348623157E308");
  EXPECT_EQ(java(std::numeric_limits<double>::denorm_min()), "4.9E-324");
  EXPECT_EQ(java(0.0), "0.0");
  EXPECT_EQ(java(-0.0), "-0.0");
  EXPECT_EQ(java(std::nan("")), "NaN");
  EXPECT_EQ(java(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(java_f(1.1f), "1.1");
  EXPECT_EQ(java_f(0.1f), "0.1");
  EXPECT_EQ(java_f(std::numeric_limits<float>::max()), "3.4028235E38");
  EXPECT_EQ(java_f(std::numeric_limits<float>::denorm_min()), "1.4E-45");
}

TEST(KiekerDat, RandomDoublesRoundTripThroughJavaText) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    double v = std::bit_cast<double>(rng());
    double back = 0;
    ASSERT_TRUE(parse_java_double(java(v), &back)) << java(v);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(back));
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(back), std::bit_cast<uint64_t>(v)) << java(v);
    }
  }
  double v = 0;
  EXPECT_TRUE(parse_java_double("+1.5e3d", &v));
  EXPECT_EQ(v, 1500.0);
  EXPECT_TRUE(parse_java_double("-Infinity", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  EXPECT_FALSE(parse_java_double("inf", &v));
  EXPECT_FALSE(parse_java_double("1.0x", &v));
  EXPECT_FALSE(parse_java_double("", &v));
}

Record make(const RecordSchema* s, int64_t ts, std::vector<Value> values) {
  Record r;
  r.schema = s;
  r.logging_timestamp = ts;
  r.values = std::move(values);
  return r;
}

Record all_types(std::string_view s, std::vector<std::string_view> a) {
  return make(&kAllTypes, 42,
              {int64_t{-7}, int64_t{1} << 40, 0.25, 1.5, true, s, int64_t{-3}, int64_t{300},
               int64_t{0xE9}, std::move(a)});
}

TEST(KiekerDat, EncodesEveryFieldType) {
  std::string line;
  EXPECT_EQ(encode_dat_line(all_types("str", {"x", "y"}), 9, line), 0u);
  EXPECT_EQ(line, "$9;42;-7;1099511627776;0.25;1.5;true;str;-3;300;\xC3\xA9;2;x;y\n");
}

TEST(KiekerDat, AllTypesRoundTrip) {
  StringPool pool;
  ReaderRegistry reg(pool, testing::lookup_with_all_types);
  reg.add(9, "test.AllTypes");
  for (auto* c : {"\\", ";"}) {  // chars that need care: `\` is not an escape for chars
    Record in = all_types("a\\b", {});
    in.values[8] = int64_t{static_cast<unsigned char>(*c)};
    std::string line;
    size_t altered = encode_dat_line(in, 9, line);
    Record out;
    std::string detail;
    ASSERT_EQ(decode_dat_line(line.substr(0, line.size() - 1), reg, pool, out, &detail),
              DatStatus::kOk)
        << line << detail;
    EXPECT_EQ(out.values.size(), in.values.size());
    for (size_t i = 0; i < in.values.size(); ++i) {
      if (i == 8 && *c == ';') {
        EXPECT_EQ(altered, 1u);
        EXPECT_EQ(out.i64(8), kDatSubstitute);
      } else {
        EXPECT_EQ(out.values[i], in.values[i]) << "field " << i << " of " << line;
      }
    }
  }
}

TEST(KiekerDat, UnrepresentableStringsAreSubstitutedAndCounted) {
  std::string line;
  size_t altered = encode_dat_line(all_types("a;b\r\nc\\", {"ok", "x;y", "tail\\\\"}), 1, line);
  EXPECT_EQ(altered, 2u);  // the string and one array element; "tail\\\\" pairs up
  EXPECT_EQ(line,
            "$1;42;-7;1099511627776;0.25;1.5;true;a_b__c_;-3;300;\xC3\xA9;3;ok;x_y;tail\\\\\n");
}

TEST(KiekerDat, RecordWithoutFieldsIsJustTheHeader) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(5, "kieker.common.record.misc.EmptyRecord");
  Record r;
  std::string d;
  ASSERT_EQ(decode_dat_line("$5;-1", reg, pool, r, &d), DatStatus::kOk) << d;
  EXPECT_TRUE(r.values.empty());
  std::string back;
  encode_dat_line(r, 5, back);
  EXPECT_EQ(back, "$5;-1\n");
  EXPECT_EQ(decode_dat_line("$5;-1;", reg, pool, r, &d), DatStatus::kMalformed);
}

TEST(KiekerDat, BackslashPairsStayVerbatimAsInKieker) {
  StringPool pool;
  ReaderRegistry reg(pool, testing::lookup_with_all_types);
  reg.add(9, "test.AllTypes");
  Record out;
  std::string detail;
  // `\;` does not end the field: Kieker's reader keeps the pair verbatim.
  std::string line = "$9;1;1;2;3.0;4.0;false;x\\;y;1;2;c;0";
  ASSERT_EQ(decode_dat_line(line, reg, pool, out, &detail), DatStatus::kOk) << detail;
  EXPECT_EQ(out.str(5), "x\\;y");
}

std::string testdata(const std::string& rel) { return std::string(SONDE_TESTDATA_DIR) + "/" + rel; }

void expect_lines_round_trip(const std::string& log_dir, size_t expected_lines) {
  StringPool pool;
  ReaderRegistry reg(pool);
  std::vector<std::string> errors;
  ASSERT_TRUE(read_map_file(log_dir + "/kieker.map", reg, errors));
  ASSERT_TRUE(errors.empty());
  size_t lines = 0;
  for (const char* name : {"kieker-20100830-082225582-UTC-Thread-2.dat",
                           "kieker-20141008-101258830-UTC-000-Thread-1.dat",
                           "kieker-20170805-132412202-UTC-000-Thread-1.dat"}) {
    std::ifstream in(log_dir + "/" + name, std::ios::binary);
    if (!in) continue;
    std::string line;
    Record r;
    while (std::getline(in, line)) {
      ++lines;
      std::string detail;
      ASSERT_EQ(decode_dat_line(line, reg, pool, r, &detail), DatStatus::kOk) << line << detail;
      int32_t type_id = std::stoi(line.substr(1, line.find(';') - 1));
      std::string back;
      EXPECT_EQ(encode_dat_line(r, type_id, back), 0u);
      ASSERT_EQ(back, line + "\n");
    }
  }
  EXPECT_EQ(lines, expected_lines);
}

TEST(KiekerDat, TestdataLinesRoundTripByteIdentical) {
  expect_lines_round_trip(testdata("kieker/bookstore-oer-2010/log"), 6541);
  expect_lines_round_trip(testdata("kieker/events-2014/log"), 13);
  expect_lines_round_trip(testdata("kieker/events-2017-singleton/log"), 106);
}

TEST(KiekerDat, DecodeReportsReasons) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(2, "kieker.common.record.flow.trace.operation.BeforeOperationEvent");
  reg.add(4, "com.example.Unknown");
  Record r;
  std::string d;
  auto status = [&](std::string_view line) { return decode_dat_line(line, reg, pool, r, &d); };
  EXPECT_EQ(status("$2;5;1;2;3;op;cls\r"), DatStatus::kOk);
  EXPECT_EQ(r.logging_timestamp, 5);
  EXPECT_EQ(r.str(4), "cls");
  EXPECT_EQ(status("2;5;1;2;3;op;cls"), DatStatus::kMalformed);
  EXPECT_NE(d.find("'$'"), std::string::npos);
  EXPECT_EQ(status("$x;5"), DatStatus::kMalformed);
  EXPECT_EQ(status("$7;5;1"), DatStatus::kUnknownTypeId);
  EXPECT_EQ(status("$2"), DatStatus::kMalformed);
  EXPECT_EQ(status("$2;zz;1;2;3;op;cls"), DatStatus::kMalformed);
  EXPECT_NE(d.find("logging timestamp"), std::string::npos);
  EXPECT_EQ(status("$2;5;1;2;3;op"), DatStatus::kMalformed);
  EXPECT_NE(d.find("classSignature"), std::string::npos);
  EXPECT_EQ(status("$2;5;1;2;3;op;cls;extra"), DatStatus::kMalformed);
  EXPECT_NE(d.find("after the last field"), std::string::npos);
  EXPECT_EQ(status("$2;5;1;2;99999999999;op;cls"), DatStatus::kMalformed);
  EXPECT_NE(d.find("orderIndex"), std::string::npos);
  EXPECT_EQ(status("$4;5;anything"), DatStatus::kUnknownClass);
  EXPECT_EQ(d, "com.example.Unknown");
}

class DatCollect : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    std::string line;
    encode_dat_line(r, 0, line);
    lines.push_back(line);
    return static_cast<int>(lines.size()) != stop_after;
  }
  std::vector<std::string> lines;
  int stop_after = -1;
};

TEST(KiekerDat, StreamReportsFileAndLineAndContinues) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(2, "kieker.common.record.flow.trace.operation.BeforeOperationEvent");
  reg.add(4, "com.example.Unknown");
  const std::string text =
      "$2;1;1;2;0;op;cls\n"
      "garbage\n"
      "$9;1;1\n"
      "\n"
      "$2;1;1;2;0;op\r\n"
      "$4;1;x\n"
      "$4;2;y\n"
      "$2;2;1;2;1;op;cls\r\n"
      "$2;3;1;2;2;op;last";  // no final newline
  for (size_t chunk : {text.size(), size_t{1}, size_t{7}}) {
    LogReadStats stats;
    FileReport report("x/kieker-1.dat", stats);
    DatCollect sink;
    DatStreamDecoder dec(reg, pool, sink, report);
    for (size_t i = 0; i < text.size(); i += chunk)
      dec.feed(std::string_view(text).substr(i, chunk));
    dec.finish();
    EXPECT_EQ(sink.lines.size(), 3u);
    EXPECT_EQ(stats.records, 3u);
    EXPECT_EQ(stats.skipped, 5u);
    EXPECT_FALSE(stats.ok);
    ASSERT_EQ(stats.errors.size(), 3u);
    EXPECT_EQ(stats.errors[0].rfind("x/kieker-1.dat: line 2: ", 0), 0u) << stats.errors[0];
    EXPECT_EQ(stats.errors[1].rfind("x/kieker-1.dat: line 3: ", 0), 0u) << stats.errors[1];
    EXPECT_EQ(stats.errors[2].rfind("x/kieker-1.dat: line 5: ", 0), 0u) << stats.errors[2];
    ASSERT_EQ(stats.warnings.size(), 1u);
    EXPECT_NE(stats.warnings[0].find("skipped 2 record(s) of type com.example.Unknown"),
              std::string::npos);
    EXPECT_EQ(sink.lines[2], "$0;3;1;2;2;op;last\n");
  }
}

TEST(KiekerDat, StreamStopsWhenSinkSaysSo) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(2, "kieker.common.record.flow.trace.operation.BeforeOperationEvent");
  LogReadStats stats;
  FileReport report("f.dat", stats);
  DatCollect sink;
  sink.stop_after = 1;
  DatStreamDecoder dec(reg, pool, sink, report);
  EXPECT_FALSE(dec.feed("$2;1;1;2;0;op;cls\n$2;1;1;2;0;op;cls\n"));
  dec.finish();
  EXPECT_EQ(sink.lines.size(), 1u);
}

TEST(KiekerDat, TruncatedLastLineWarnsAndOverlongLinesAreSkipped) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(2, "kieker.common.record.flow.trace.operation.BeforeOperationEvent");
  LogReadStats stats;
  FileReport report("f.dat", stats);
  DatCollect sink;
  DatStreamDecoder dec(reg, pool, sink, report);
  const std::string junk(kMaxDatLine + 10, 'x');
  for (size_t i = 0; i < junk.size(); i += 1 << 20)
    dec.feed(std::string_view(junk).substr(i, 1 << 20));
  dec.feed("\n$2;1;1;2;0;op;cls\n$2;1;1;2");
  dec.finish();
  EXPECT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(stats.skipped, 2u);
  ASSERT_EQ(stats.errors.size(), 1u);
  EXPECT_EQ(stats.errors[0], "f.dat: line 1: longer than 16777216 bytes; skipped");
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_EQ(stats.warnings[0],
            "f.dat: line 3: file ends inside a line (truncated): line ends before field "
            "'orderIndex' (3 of 5)");
}

TEST(KiekerDat, GarbageNeverCrashes) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(0, "kieker.common.record.misc.KiekerMetadataRecord");
  reg.add(1, "kieker.common.record.flow.trace.operation.EntryLevelBeforeOperationEvent");
  reg.add(2, "com.example.Unknown");
  std::mt19937 rng(7);
  const std::string alphabet = "$;0123456789-\\\r\n.eEtrufalsNIy ";
  for (int round = 0; round < 200; ++round) {
    std::string text;
    for (int i = 0; i < 2000; ++i) text += alphabet[rng() % alphabet.size()];
    LogReadStats stats;
    FileReport report("g.dat", stats);
    DatCollect sink;
    DatStreamDecoder dec(reg, pool, sink, report);
    dec.feed(text);
    dec.finish();
    EXPECT_LE(stats.errors.size(), FileReport::kMaxErrors + 1);
  }
}

TEST(KiekerDat, EntryLevelArraysRoundTrip) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(3, "kieker.common.record.flow.trace.operation.EntryLevelBeforeOperationEvent");
  const std::string line = "$3;10;11;12;0;op;cls;2;p1;p2;0;7";
  Record r;
  std::string d;
  ASSERT_EQ(decode_dat_line(line, reg, pool, r, &d), DatStatus::kOk) << d;
  EXPECT_EQ(std::get<std::vector<std::string_view>>(r.values[5]).size(), 2u);
  EXPECT_TRUE(std::get<std::vector<std::string_view>>(r.values[6]).empty());
  EXPECT_EQ(r.i64(7), 7);
  std::string back;
  encode_dat_line(r, 3, back);
  EXPECT_EQ(back, line + "\n");
  EXPECT_EQ(decode_dat_line("$3;10;11;12;0;op;cls;5;p1", reg, pool, r, &d), DatStatus::kMalformed);
  EXPECT_NE(d.find("inside array 'parameters'"), std::string::npos) << d;
  EXPECT_EQ(decode_dat_line("$3;10;11;12;0;op;cls;-1;0;7", reg, pool, r, &d),
            DatStatus::kMalformed);
}

}  // namespace
}  // namespace sonde::format::kieker
