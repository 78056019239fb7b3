// Seeds for the fuzz replays (replay_main.cpp) made from a Kieker fixture
// log (tests/data/kieker/*/log) in each harness's input layout, the same
// layouts scripts/fuzz.sh builds with the `sonde` binary:
//   kieker-dat  kieker.map, NUL, the first 8 KiB of the first .dat file
//   kieker-bin  kieker.map, NUL, the log converted to .bin
//   native      the log converted to a native .sonde file
//   kieker-tcp  a piece-size byte, then the records as Kieker's TCP stream
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/convert.hpp"
#include "format/kieker_tcp.hpp"
#include "format/log_reader.hpp"

namespace sonde::fuzz {

// A file's bytes (at most `limit`); throws naming the file if it cannot be
// opened, so that a missing seed fails the replay instead of feeding nothing.
inline std::string slurp(const std::filesystem::path& path, size_t limit = std::string::npos) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (bytes.size() > limit) bytes.resize(limit);
  return bytes;
}

namespace replay_detail {

// The directory's files ending in `suffix`, in name order.
inline std::vector<std::filesystem::path> files_ending(const std::filesystem::path& dir,
                                                       const std::string& suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.ends_with(suffix)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::filesystem::path scratch(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("sonde-replay-seed-" + std::to_string(getpid())) / name;
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path.parent_path());
  return path;
}

class TcpStream : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    encoder_.encode(r, bytes);
    return true;
  }
  std::string bytes;

 private:
  format::kieker::TcpEncoder encoder_;
};

}  // namespace replay_detail

// Empty with `*error` set when the fixture cannot be read or converted.
inline std::string seed_from_kieker(const std::string& dir, const std::string& as,
                                    std::string* error) {
  namespace d = replay_detail;
  try {
    if (as == "kieker-dat") {
      const auto dats = d::files_ending(dir, ".dat");
      if (dats.empty()) {
        *error = "no .dat file";
        return {};
      }
      return slurp(std::filesystem::path(dir) / "kieker.map") + '\0' + slurp(dats.front(), 8192);
    }
    if (as == "kieker-bin" || as == "native") {
      const bool bin = as == "kieker-bin";
      const auto out = d::scratch(bin ? "bin" : "log.sonde");
      const format::ConvertResult r = format::convert_log(
          dir, bin ? format::OutputFormat::kKiekerBin : format::OutputFormat::kNative,
          out.string());
      if (!r.ok() || r.written == 0) {
        *error = r.error.empty() ? "nothing converted" : r.error;
        return {};
      }
      if (!bin) return slurp(out);
      std::string bytes = slurp(out / "kieker.map") + '\0';
      for (const auto& f : d::files_ending(out, ".bin")) bytes += slurp(f);
      return bytes;
    }
    if (as == "kieker-tcp") {
      d::TcpStream stream;
      const format::LogReadStats r = format::read_kieker_directory(dir, stream);
      if (!r.ok || r.records == 0) {
        *error = r.errors.empty() ? "no records" : r.errors.front();
        return {};
      }
      return std::string(1, '\x07') + stream.bytes;  // pieces of 8 bytes
    }
  } catch (const std::exception& e) {
    *error = e.what();
    return {};
  }
  *error = "unknown layout '" + as + "'";
  return {};
}

}  // namespace sonde::fuzz
