// Where valid UTF-8 sequences are: the text escapers (text, pic, SVG) keep
// valid multi-byte characters and escape or replace everything else.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sonde::analysis {

// Length (2-4) of the valid UTF-8 sequence starting at text[i], or 0 if the
// byte there does not start one (ASCII included).
size_t utf8_sequence_length(std::string_view text, size_t i);

// `text` with every byte sequence that is not valid UTF-8 (stray
// continuation bytes, overlong forms, surrogates, code points past U+10FFFF,
// truncated sequences) replaced by U+FFFD. Operation names come from the
// monitored program and are not guaranteed to be UTF-8; JSON and XML are.
std::string to_valid_utf8(std::string_view text);

}  // namespace sonde::analysis
