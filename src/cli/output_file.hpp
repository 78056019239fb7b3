// Writing a command's output file in one place, so every command reports a
// failed write the same way: the path and the system's reason (a missing
// directory, a full disk), checked after the final flush.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace sonde::cli {

// Creates or truncates `path` and lets `fill` write it. Returns "" on
// success, else "cannot write 'PATH': REASON".
std::string write_output_file(const std::string& path,
                              const std::function<void(std::ostream&)>& fill);
std::string write_output_file(const std::string& path, std::string_view content);

}  // namespace sonde::cli
