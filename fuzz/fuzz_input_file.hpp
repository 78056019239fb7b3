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

// A Kieker filesystem log from one input: the kieker.map before the first
// NUL (or one naming the flow records the seeds use), the data file after.
// `data_file` names it, e.g. "kieker-...-001.dat" or ".bin"; the reader
// detects compression by magic bytes either way.
inline void write_kieker_directory(const uint8_t* data, size_t size, const std::string& data_file) {
  constexpr std::string_view kDefaultMap =
      "$0=kieker.common.record.flow.trace.TraceMetadata\n"
      "$1=kieker.common.record.flow.trace.operation.BeforeOperationEvent\n"
      "$2=kieker.common.record.flow.trace.operation.AfterOperationEvent\n"
      "$3=kieker.common.record.controlflow.OperationExecutionRecord\n"
      "$4=kieker.common.record.flow.trace.operation.AfterOperationFailedEvent\n"
      "$5=kieker.common.record.flow.trace.operation.CallOperationEvent\n";
  const auto [map, content] = split_at_nul(data, size, kDefaultMap);
  write_file("kieker.map", map);
  write_file(data_file, content);
}

}  // namespace sonde::fuzz
