// The one UTF-8 check the text escapers and the exporters share
// (analysis/text/utf8_scan.hpp): what is valid stays byte for byte, every
// other byte becomes U+FFFD, and a sequence length is reported only for a
// complete, shortest-form, non-surrogate code point up to U+10FFFF.
#include <gtest/gtest.h>

#include <string>

#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(Utf8, ValidTextIsKeptByteForByte) {
  const std::string text = "plain ASCII, \xC3\xA9t\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80";
  EXPECT_EQ(to_valid_utf8(text), text);
  EXPECT_EQ(to_valid_utf8(""), "");
  EXPECT_EQ(utf8_sequence_length(text, 13), 2u);  // é
  EXPECT_EQ(utf8_sequence_length("a", 0), 0u);    // ASCII is not a multi-byte sequence
}

TEST(Utf8, EachInvalidByteBecomesOneReplacementCharacter) {
  // A stray continuation byte, a lead byte no sequence starts with.
  EXPECT_EQ(to_valid_utf8("a\x80"
                          "b"),
            "a" + kReplacement + "b");
  EXPECT_EQ(to_valid_utf8("\xFF"), kReplacement);
  // Overlong forms of '/' (2 and 3 bytes): each byte replaced on its own.
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), kReplacement + kReplacement);
  EXPECT_EQ(to_valid_utf8("\xE0\x80\xAF"), kReplacement + kReplacement + kReplacement);
  // A UTF-16 surrogate (U+D800) and a code point past U+10FFFF.
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(to_valid_utf8("\xF4\x90\x80\x80"),
            kReplacement + kReplacement + kReplacement + kReplacement);
  // A sequence cut short by the end of the text, then valid text after a cut one.
  EXPECT_EQ(to_valid_utf8("x\xE2\x82"), "x" + kReplacement + kReplacement);
  EXPECT_EQ(to_valid_utf8("\xE2\x82"
                          "\xC3\xA9"),
            kReplacement + kReplacement + "\xC3\xA9");
}

}  // namespace
}  // namespace sonde::analysis
