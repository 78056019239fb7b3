// Escaping for Graphviz DOT. Every string sonde writes into a DOT file goes
// through dot_quote: operation names come from the monitored program and may
// contain anything (quotes, backslashes, newlines, "<script>", template
// brackets). Output uses quoted-string labels only, never HTML-like labels,
// so '<', '>' and '&' need no escaping in DOT; Graphviz escapes them itself
// when it writes SVG.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sonde::analysis {

// `text` as a DOT quoted string, quotes included. '"' and '\' are escaped
// (so Graphviz's label escapes such as \N or \l cannot be injected), a
// newline becomes DOT's "\n" line break, other control characters and bytes
// that are not valid UTF-8 become '?'.
std::string dot_quote(std::string_view text);

// Several lines as one quoted label, joined with DOT's "\n" line break.
std::string dot_label(std::span<const std::string> lines);

}  // namespace sonde::analysis
