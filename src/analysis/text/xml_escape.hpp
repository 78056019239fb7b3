// Text for XML/SVG content and attribute values: markup characters escaped,
// invalid UTF-8 replaced (U+FFFD), and code points XML 1.0 forbids even as
// references (control characters, U+FFFE, U+FFFF) replaced, so a hostile
// operation name can never break or script an SVG.
#pragma once

#include <string>
#include <string_view>

namespace sonde::analysis {

std::string xml_escape(std::string_view text);

}  // namespace sonde::analysis
