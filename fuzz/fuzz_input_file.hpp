// Fuzz inputs reach the readers the way real input does: as files. Each
// harness writes its bytes into a private scratch directory (one per
// process, reused across iterations) and hands the path to the reader.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace sonde::fuzz {

inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("sonde-fuzz-" + std::to_string(getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_file(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(),
                                                                static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Splits the input at its first NUL byte: the part before configures the
// harness (a kieker.map, say), the part after is the data. Without a NUL
// the whole input is data and `fallback` is the first part.
inline std::pair<std::string_view, std::string_view> split_at_nul(const uint8_t* data, size_t size,
                                                                  std::string_view fallback) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  if (nul == std::string_view::npos) return {fallback, all};
  return {all.substr(0, nul), all.substr(nul + 1)};
}

}  // namespace sonde::fuzz
