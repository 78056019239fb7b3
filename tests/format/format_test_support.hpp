// Shared by the format tests: the fixtures' path, a temporary directory,
// and every field of a record as text (doubles bit-exact, hexfloat) so equal
// strings mean equal records when two readers are compared.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "format/record.hpp"

namespace sonde::format::test {

inline std::string testdata(const std::string& rel) {
  return std::string(SONDE_TESTDATA_DIR) + "/" + rel;
}

// A fresh directory under the system's temporary directory, removed with its content.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "sonde-format") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The n-byte big-endian number at `at` (Kieker's binary formats).
inline uint64_t big_endian_at(const std::string& b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

inline std::string describe_record(const Record& r) {
  std::ostringstream s;
  s << r.schema->class_name << "@" << r.logging_timestamp;
  for (const Value& v : r.values) {
    s << "|";
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::vector<std::string_view>>) {
            s << "[";
            for (auto e : x) s << e << ",";
            s << "]";
          } else if constexpr (std::is_same_v<X, double>) {
            s << std::hexfloat << x;
          } else {
            s << x;
          }
        },
        v);
  }
  return s.str();
}

}  // namespace sonde::format::test
