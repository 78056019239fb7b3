#include "format/kieker_map.hpp"

#include <gtest/gtest.h>

namespace sonde::format::kieker {
namespace {

TEST(KiekerMap, LineForBackslashAndNewlineIsEscapedAndRoundTrips) {
  const std::string value = "C:\\new\\dir\nline2\r\\";
  std::string line;
  append_map_line(line, 7, value);
  EXPECT_EQ(line, "$7=C:\\\\new\\\\dir\\nline2\\r\\\\\n");

  StringPool pool;
  ReaderRegistry reg(pool);
  std::vector<std::string> errors;
  EXPECT_EQ(parse_map_text(line, "kieker.map", reg, errors), 1u);
  EXPECT_TRUE(errors.empty());
  std::string_view back;
  ASSERT_TRUE(reg.find(7, &back));
  EXPECT_EQ(back, value);
}

TEST(KiekerMap, DecodeKeepsUnknownEscapesAndTrailingBackslash) {
  EXPECT_EQ(decode_map_value("a\\tb"), "a\\tb");
  EXPECT_EQ(decode_map_value("end\\"), "end\\");
  EXPECT_EQ(decode_map_value("\\\\n"), "\\n");
}

TEST(KiekerMap, ParsesOptionalDollarFirstEqualsEmptyLinesAndCrlf) {
  StringPool pool;
  ReaderRegistry reg(pool);
  std::vector<std::string> errors;
  std::string text = "$0=kieker.common.record.misc.KiekerMetadataRecord\r\n\n1=a=b\n\r\n$2=\n";
  EXPECT_EQ(parse_map_text(text, "m.map", reg, errors), 3u);
  EXPECT_TRUE(errors.empty());
  std::string_view v;
  ASSERT_TRUE(reg.find(0, &v));
  EXPECT_EQ(v, "kieker.common.record.misc.KiekerMetadataRecord");
  ASSERT_TRUE(reg.find(1, &v));
  EXPECT_EQ(v, "a=b");
  ASSERT_TRUE(reg.find(2, &v));
  EXPECT_EQ(v, "");
  EXPECT_FALSE(reg.find(3, &v));
  EXPECT_FALSE(reg.find(-1, &v));
}

TEST(KiekerMap, MalformedLinesAndConflictingDuplicatesNameFileAndLine) {
  StringPool pool;
  ReaderRegistry reg(pool);
  std::vector<std::string> errors;
  std::string text = "$0=first\nno equals sign\n$x=1\n$-4=neg\n$0=first\n$0=second\n$1=ok\n";
  EXPECT_EQ(parse_map_text(text, "dir/kieker.map", reg, errors), 2u);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_NE(errors[0].find("dir/kieker.map:2:"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("dir/kieker.map:3:"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("dir/kieker.map:4:"), std::string::npos) << errors[2];
  EXPECT_NE(errors[3].find("dir/kieker.map:6:"), std::string::npos) << errors[3];
  EXPECT_NE(errors[3].find("duplicate map id 0"), std::string::npos) << errors[3];
  std::string_view v;
  ASSERT_TRUE(reg.find(0, &v));
  EXPECT_EQ(v, "first");
}

TEST(KiekerMap, MissingFileIsAnErrorNamingIt) {
  StringPool pool;
  ReaderRegistry reg(pool);
  std::vector<std::string> errors;
  EXPECT_FALSE(read_map_file("/nonexistent/kieker.map", reg, errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/nonexistent/kieker.map"), std::string::npos);
}

TEST(KiekerMap, TypeResolvesBuiltinSchemasAndUnknownClasses) {
  StringPool pool;
  ReaderRegistry reg(pool);
  reg.add(0, "kieker.common.record.flow.trace.operation.BeforeOperationEvent");
  reg.add(5, "com.example.UnknownRecord");
  reg.add(1 << 24, "kieker.common.record.flow.trace.TraceMetadata");  // sparse id
  ASSERT_NE(reg.type(0), nullptr);
  EXPECT_NE(reg.type(0)->schema, nullptr);
  ASSERT_NE(reg.type(5), nullptr);
  EXPECT_EQ(reg.type(5)->schema, nullptr);
  EXPECT_EQ(reg.type(5)->class_name, "com.example.UnknownRecord");
  ASSERT_NE(reg.type(1 << 24), nullptr);
  EXPECT_NE(reg.type(1 << 24)->schema, nullptr);
  EXPECT_EQ(reg.type(3), nullptr);
  EXPECT_EQ(reg.size(), 3u);
  reg.set(5, "kieker.common.record.flow.trace.TraceMetadata");
  EXPECT_NE(reg.type(5)->schema, nullptr);
}

TEST(KiekerMap, WriterRegistryAssignsIdsInFirstUseOrder) {
  WriterRegistry w;
  EXPECT_EQ(w.id("a"), 0);
  EXPECT_EQ(w.id("b"), 1);
  EXPECT_EQ(w.id("a"), 0);
  EXPECT_EQ(w.id(""), 2);
  EXPECT_EQ(w.size(), 3);
  EXPECT_EQ(w.value(1), "b");
}

}  // namespace
}  // namespace sonde::format::kieker
