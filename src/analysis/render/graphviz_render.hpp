// Renders DOT text with the Graphviz `dot` program (Debian package
// `graphviz`). The program is run directly with fork/exec, its stdin, stdout
// and stderr on pipes: no shell, so nothing in the graph or the paths is
// ever interpreted as a command.
#pragma once

#include <string>
#include <string_view>

namespace sonde::analysis {

struct RenderResult {
  bool ok = false;
  std::string output;  // the rendered document (e.g. SVG) when ok
  std::string error;   // why not, for people: missing program, dot's own messages, ...
};

// The absolute path of `program` (searched in $PATH unless it contains a
// '/'), or "" if there is no executable file by that name.
std::string find_executable(std::string_view program);

// How long dot may run before it is killed and the render fails: a graph
// too large to lay out must not hang a command or a web request.
inline constexpr int kRenderTimeoutMs = 120000;

// Runs `<dot_program> -T<format>` with `dot_source` on stdin. `format` is a
// Graphviz output format such as "svg" or "png" (letters, digits and ':').
RenderResult render_dot(std::string_view dot_source, std::string_view format = "svg",
                        std::string_view dot_program = "dot", int timeout_ms = kRenderTimeoutMs);

}  // namespace sonde::analysis
