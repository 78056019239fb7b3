#include "cli/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace sonde::cli {
namespace {

std::string failure(const std::string& path) {
  const int e = errno;
  return "cannot write '" + path + "': " + (e != 0 ? std::strerror(e) : "an I/O error");
}

}  // namespace

std::string write_output_file(const std::string& path,
                              const std::function<void(std::ostream&)>& fill) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return failure(path);
  fill(out);
  out.close();  // the last buffer reaches the disk here: a full disk shows now
  if (!out) return failure(path);
  return "";
}

std::string write_output_file(const std::string& path, std::string_view content) {
  return write_output_file(path, [content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

}  // namespace sonde::cli
