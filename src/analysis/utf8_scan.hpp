// Where valid UTF-8 sequences are: the text escapers (text, pic, SVG) keep
// valid multi-byte characters and escape or replace everything else.
#pragma once

#include <cstddef>
#include <string_view>

namespace sonde::analysis {

// Length (2-4) of the valid UTF-8 sequence starting at text[i], or 0 if the
// byte there does not start one (ASCII included).
size_t utf8_sequence_length(std::string_view text, size_t i);

}  // namespace sonde::analysis
