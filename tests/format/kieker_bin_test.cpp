#include "format/kieker_bin.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "all_types_schema.hpp"
#include "format_test_support.hpp"

namespace sonde::format::kieker {
namespace {

using T = FieldType;

using testing::kAllTypes;

const RecordSchema* schema(std::string_view name) {
  const RecordSchema* s = find_builtin_schema(name);
  EXPECT_NE(s, nullptr) << name;
  return s;
}

// Values that differ per field so a misplaced field shows up.
Record sample(const RecordSchema* s, int seed) {
  Record r;
  reset_to_defaults(r, s);
  r.logging_timestamp = 1000 + seed;
  static const std::vector<std::string> kStrings = {"alpha", "beta", "gamma \xE2\x82\xAC;\n", ""};
  for (size_t i = 0; i < s->fields.size(); ++i) {
    int64_t k = seed * 31 + static_cast<int64_t>(i);
    switch (s->fields[i].type) {
      case T::kInt32:
        r.values[i] = -k;
        break;
      case T::kInt64:
        r.values[i] = (k << 40) + 5;
        break;
      case T::kShort:
        r.values[i] = -k % 30000;
        break;
      case T::kByte:
        r.values[i] = k % 100;
        break;
      case T::kChar:
        r.values[i] = 0x263A + k;
        break;
      case T::kDouble:
        r.values[i] = 0.1 * static_cast<double>(k);
        break;
      case T::kFloat:
        r.values[i] = static_cast<double>(static_cast<float>(k) / 3.0f);
        break;
      case T::kBool:
        r.values[i] = k % 2 == 1;
        break;
      case T::kString:
        r.values[i] = std::string_view(kStrings[k % kStrings.size()]);
        break;
      case T::kStringArray:
        r.values[i] = std::vector<std::string_view>(kStrings.begin() + (k % 3), kStrings.end());
        break;
    }
  }
  return r;
}

TEST(KiekerBin, BeforeOperationEventIs40BigEndianBytes) {
  WriterRegistry strings;
  const int32_t type = strings.id(kieker_class::kBeforeOperation);  // 0
  Record r;
  reset_to_defaults(r, schema(kieker_class::kBeforeOperation));
  r.logging_timestamp = 0x0102030405060708;
  r.values = {int64_t{0x1112131415161718}, int64_t{-2}, int64_t{7}, std::string_view("op"),
              std::string_view("cls")};
  std::string out;
  encode_bin_record(r, type, strings, out);
  ASSERT_EQ(out.size(), 40u);
  EXPECT_EQ(test::big_endian_at(out, 0, 4), 0u);                    // type id
  EXPECT_EQ(test::big_endian_at(out, 4, 8), 0x0102030405060708u);   // logging timestamp
  EXPECT_EQ(test::big_endian_at(out, 12, 8), 0x1112131415161718u);  // timestamp
  EXPECT_EQ(test::big_endian_at(out, 20, 8), 0xFFFFFFFFFFFFFFFEu);  // traceId -2
  EXPECT_EQ(test::big_endian_at(out, 28, 4), 7u);                   // orderIndex
  EXPECT_EQ(test::big_endian_at(out, 32, 4), 1u);                   // "op" registered after the class name
  EXPECT_EQ(test::big_endian_at(out, 36, 4), 2u);                   // "cls"
  EXPECT_EQ(strings.size(), 3);
}

TEST(KiekerBin, RecordSizesMatchKieker) {
  // Header 12 bytes + payload (anchor §1.3).
  const std::pair<std::string_view, size_t> kSizes[] = {
      {kieker_class::kOperationExecution, 56},
      {kieker_class::kMetadata, 49},
      {"kieker.common.record.flow.trace.ApplicationTraceMetadata", 52},
      {kieker_class::kTraceMetadata, 48},
      {kieker_class::kAfterOperationFailed, 44},
      {kieker_class::kCallOperation, 48},
      {"kieker.common.record.flow.trace.operation.object.CallOperationObjectEvent", 56},
      {"kieker.common.record.flow.trace.concurrency.SplitEvent", 32},
      {"kieker.common.record.flow.trace.concurrency.JoinEvent", 40},
      {"kieker.common.record.flow.trace.BeforeReceivedRemoteEvent", 44},
      {"kieker.common.record.misc.OperationCallEvent", 28},
  };
  for (auto [name, size] : kSizes) {
    WriterRegistry strings;
    std::string out;
    Record r;
    reset_to_defaults(r, schema(name));
    encode_bin_record(r, 0, strings, out);
    EXPECT_EQ(out.size(), size) << name;
  }
}

std::string field_list(const RecordSchema* s) {
  std::string out;
  for (const FieldSpec& f : s->fields) out += f.name + ":" + std::string(to_string(f.type)) + " ";
  return out;
}

// Orders from the serialize() methods in Kieker's common/src-gen classes.
TEST(KiekerBin, SchemasFollowKiekersSerializationOrder) {
  const std::string op =
      "timestamp:long traceId:long orderIndex:int operationSignature:string "
      "classSignature:string ";
  const std::string flow = "kieker.common.record.flow.";
  EXPECT_EQ(field_list(schema(flow + "trace.operation.object.AfterOperationFailedObjectEvent")),
            op + "cause:string objectId:int ");
  EXPECT_EQ(field_list(schema(flow + "trace.operation.object.CallOperationObjectEvent")),
            op + "calleeOperationSignature:string calleeClassSignature:string objectId:int "
                 "calleeObjectId:int ");
  EXPECT_EQ(field_list(schema(flow + "trace.operation.EntryLevelBeforeOperationEvent")),
            op + "parameters:string[] values:string[] requestType:int ");
  EXPECT_EQ(field_list(schema(flow + "trace.operation.constructor.AfterConstructorFailedEvent")),
            op + "cause:string ");
  EXPECT_EQ(field_list(schema(flow + "thread.AfterFailedThreadBasedEvent")),
            "timestamp:long threadId:long orderIndex:int operationSignature:string "
            "classSignature:string cause:string ");
  EXPECT_EQ(field_list(schema(flow + "trace.ConstructionEvent")),
            "timestamp:long traceId:long orderIndex:int classSignature:string objectId:int ");
  EXPECT_EQ(field_list(schema(flow + "trace.BeforeReceivedRemoteEvent")),
            "timestamp:long callerTraceId:long callerOrderIndex:int traceId:long orderIndex:int ");
  EXPECT_EQ(field_list(schema(flow + "trace.concurrency.JoinEvent")),
            "timestamp:long traceId:long orderIndex:int joinedTraceId:long ");
  EXPECT_EQ(
      field_list(schema("kieker.common.record.system.NetworkUtilizationRecord")).substr(0, 81),
      "timestamp:long hostname:string interfaceName:string speed:long txBytesPerSecond:d");
  EXPECT_EQ(schema("kieker.common.record.system.NetworkUtilizationRecord")->fields.size(), 17u);
  EXPECT_EQ(field_list(schema("kieker.common.record.system.LoadAverageRecord")),
            "timestamp:long hostname:string oneMinLoadAverage:double fiveMinLoadAverage:double "
            "fifteenMinLoadAverage:double ");
}

TEST(KiekerBin, BuiltinClassNamesAreUnique) {
  std::set<std::string> names;
  for (const RecordSchema* s : builtin_schemas()) {
    EXPECT_TRUE(names.insert(s->class_name).second) << "defined twice: " << s->class_name;
  }
  EXPECT_GE(names.size(), 8u + 40u);
}

TEST(KiekerBin, EveryBuiltinSchemaRoundTrips) {
  for (const RecordSchema* s : builtin_schemas()) {
    WriterRegistry strings;
    std::string out;
    Record in = sample(s, 3);
    const int32_t type = strings.id(s->class_name);
    encode_bin_record(in, type, strings, out);
    StringPool pool;
    ReaderRegistry reg(pool);
    for (int32_t id = 0; id < strings.size(); ++id) reg.add(id, strings.value(id));
    Record back;
    size_t size = 0;
    std::string detail;
    ASSERT_EQ(decode_bin_record(out, reg, back, &size, &detail), BinStatus::kOk) << s->class_name;
    EXPECT_EQ(size, out.size());
    EXPECT_EQ(back.schema, s);
    EXPECT_EQ(back.logging_timestamp, in.logging_timestamp);
    EXPECT_EQ(back.values, in.values) << s->class_name;
  }
}

TEST(KiekerBin, AllFieldTypesRoundTripAndTruncationsNeedMore) {
  WriterRegistry strings;
  std::string out;
  Record in = sample(&kAllTypes, 1);
  encode_bin_record(in, strings.id(kAllTypes.class_name), strings, out);
  EXPECT_EQ(out.size(), 12u + 4 + 8 + 8 + 4 + 1 + 4 + 1 + 2 + 2 + 4 + 4 * 3);  // 3 array elements
  StringPool pool;
  ReaderRegistry reg(pool, testing::lookup_with_all_types);
  for (int32_t id = 0; id < strings.size(); ++id) reg.add(id, strings.value(id));
  Record back;
  size_t size = 0;
  std::string detail;
  ASSERT_EQ(decode_bin_record(out, reg, back, &size, &detail), BinStatus::kOk);
  EXPECT_EQ(back.values, in.values);
  for (size_t cut = 0; cut < out.size(); ++cut) {
    ASSERT_EQ(decode_bin_record(std::string_view(out).substr(0, cut), reg, back, &size, &detail),
              BinStatus::kNeedMore)
        << cut;
    EXPECT_GT(size, cut);
    EXPECT_LE(size, out.size());
  }
}

class Count : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    values.push_back(r.values);
    return true;
  }
  std::vector<std::vector<Value>> values;
};

struct BinFixture {
  WriterRegistry strings;
  std::string bytes;
  StringPool pool;
  ReaderRegistry reg{pool};
  void add(const Record& r) {
    encode_bin_record(r, strings.id(r.schema->class_name), strings, bytes);
  }
  void publish() {
    for (int32_t id = 0; id < strings.size(); ++id) reg.add(id, strings.value(id));
  }
};

TEST(KiekerBin, StreamDecodesChunksAndReportsTruncatedTail) {
  BinFixture f;
  for (int i = 0; i < 5; ++i) f.add(sample(schema(kieker_class::kBeforeOperation), i));
  f.publish();
  const std::string data = f.bytes.substr(0, f.bytes.size() - 3);  // last record cut
  for (size_t chunk : {data.size(), size_t{1}, size_t{13}}) {
    LogReadStats stats;
    FileReport report("d/kieker-1.bin", stats);
    Count sink;
    BinStreamDecoder dec(f.reg, sink, report);
    for (size_t i = 0; i < data.size(); i += chunk)
      dec.feed(std::string_view(data).substr(i, chunk));
    dec.finish();
    EXPECT_EQ(sink.values.size(), 4u);
    EXPECT_EQ(stats.records, 4u);
    EXPECT_EQ(stats.skipped, 1u);
    ASSERT_EQ(stats.warnings.size(), 1u);
    EXPECT_EQ(stats.warnings[0],
              "d/kieker-1.bin: offset 160: file ends inside a record (37 bytes present, at least "
              "40 needed)");
  }
}

TEST(KiekerBin, UnknownTypeIdStopsTheFileWithOffset) {
  BinFixture f;
  f.add(sample(schema(kieker_class::kBeforeOperation), 0));
  f.bytes += std::string("\x00\x00\x00\x63", 4) + std::string(36, 'x');  // type id 99
  f.add(sample(schema(kieker_class::kBeforeOperation), 1));
  f.publish();
  LogReadStats stats;
  FileReport report("f.bin", stats);
  Count sink;
  BinStreamDecoder dec(f.reg, sink, report);
  dec.feed(f.bytes);
  dec.finish();
  EXPECT_TRUE(dec.halted());
  EXPECT_EQ(sink.values.size(), 1u);
  EXPECT_EQ(stats.skipped, 1u);
  ASSERT_EQ(stats.errors.size(), 1u);
  EXPECT_EQ(stats.errors[0].rfind("f.bin: offset 40: type id 99 is not in the string registry", 0),
            0u)
      << stats.errors[0];
  EXPECT_NE(stats.errors[0].find("(80 bytes not read)"), std::string::npos) << stats.errors[0];
}

TEST(KiekerBin, UnknownClassStopsTheFileWithAWarning) {
  BinFixture f;
  f.add(sample(schema(kieker_class::kBeforeOperation), 0));
  f.publish();
  f.reg.add(50, "com.example.Custom");
  f.bytes += std::string("\x00\x00\x00\x32", 4) + std::string(20, 'x');
  LogReadStats stats;
  FileReport report("f.bin", stats);
  Count sink;
  BinStreamDecoder dec(f.reg, sink, report);
  dec.feed(f.bytes);
  dec.finish();
  EXPECT_EQ(sink.values.size(), 1u);
  EXPECT_TRUE(stats.errors.empty());
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_NE(
      stats.warnings[0].find("offset 40: record type com.example.Custom has no built-in schema"),
      std::string::npos)
      << stats.warnings[0];
  EXPECT_NE(stats.warnings[0].find("rest of the file cannot be read"), std::string::npos);
}

TEST(KiekerBin, UnknownStringIdSkipsOnlyThatRecord) {
  BinFixture f;
  for (int i = 0; i < 3; ++i) f.add(sample(schema(kieker_class::kBeforeOperation), i));
  f.publish();
  f.bytes[40 + 32 + 3] = 0x70;  // operationSignature id of the second record -> 112
  LogReadStats stats;
  FileReport report("f.bin", stats);
  Count sink;
  BinStreamDecoder dec(f.reg, sink, report);
  dec.feed(f.bytes);
  dec.finish();
  EXPECT_EQ(sink.values.size(), 2u);
  EXPECT_EQ(stats.skipped, 1u);
  ASSERT_EQ(stats.errors.size(), 1u);
  EXPECT_NE(stats.errors[0].find("offset 40: record " +
                                 std::string(kieker_class::kBeforeOperation) + ": string id 112"),
            std::string::npos)
      << stats.errors[0];
}

TEST(KiekerBin, CorruptedStreamsNeverCrash) {
  BinFixture f;
  for (int i = 0; i < 20; ++i) f.add(sample(&kAllTypes, i));
  for (int i = 0; i < 20; ++i) {
    f.add(sample(schema("kieker.common.record.flow.trace.operation.EntryLevelBeforeOperationEvent"),
                 i));
  }
  StringPool pool;
  ReaderRegistry reg(pool, testing::lookup_with_all_types);
  for (int32_t id = 0; id < f.strings.size(); ++id) reg.add(id, f.strings.value(id));
  std::mt19937 rng(11);
  for (int round = 0; round < 500; ++round) {
    std::string data = f.bytes;
    for (int k = 0; k < 4; ++k) data[rng() % data.size()] = static_cast<char>(rng());
    LogReadStats stats;
    FileReport report("c.bin", stats);
    Count sink;
    BinStreamDecoder dec(reg, sink, report);
    for (size_t i = 0; i < data.size(); i += 97) dec.feed(std::string_view(data).substr(i, 97));
    dec.finish();
    EXPECT_LE(stats.records, 40u);
  }
}

TEST(KiekerBin, NegativeArrayCountIsAnError) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(0, "kieker.common.record.flow.trace.operation.EntryLevelBeforeOperationEvent");
  reg.add(1, "s");
  std::string b(12 + 28, '\0');
  b += std::string("\xFF\xFF\xFF\xFF", 4) + std::string(8, '\0');
  b[12 + 23] = 1;  // operationSignature id 1
  b[12 + 27] = 1;  // classSignature id 1
  Record r;
  size_t size = 0;
  std::string d;
  EXPECT_EQ(decode_bin_record(b, reg, r, &size, &d), BinStatus::kBadArray);
  EXPECT_NE(d.find("negative length -1"), std::string::npos) << d;
}

}  // namespace
}  // namespace sonde::format::kieker
