// Helpers for sampler tests: a throw-away /proc tree in a temp directory, and
// field access by name so tests do not depend on field order.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "format/record.hpp"

namespace sonde::monitor::samplers::testing {

class ProcFixture {
 public:
  ProcFixture() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sonde-proc-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    root_ = pattern;
  }
  ~ProcFixture() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  ProcFixture(const ProcFixture&) = delete;
  ProcFixture& operator=(const ProcFixture&) = delete;

  const std::string& root() const { return root_; }

  // Writes (or replaces) root/relative, creating directories as needed.
  void write(const std::string& relative, std::string_view content) const {
    const std::filesystem::path p = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
  }
  void remove(const std::string& relative) const {
    std::filesystem::remove(std::filesystem::path(root_) / relative);
  }

 private:
  std::string root_;
};

inline size_t index_of(const format::Record& r, std::string_view field) {
  const int i = r.schema->field_index(field);
  EXPECT_GE(i, 0) << "no field " << field << " in " << r.schema->class_name;
  return i < 0 ? 0 : static_cast<size_t>(i);
}
inline double f64(const format::Record& r, std::string_view field) {
  return r.f64(index_of(r, field));
}
inline int64_t i64(const format::Record& r, std::string_view field) {
  return r.i64(index_of(r, field));
}
inline std::string_view str(const format::Record& r, std::string_view field) {
  return r.str(index_of(r, field));
}

inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kT0 = 1'700'000'000 * kSecond;  // an arbitrary epoch time

}  // namespace sonde::monitor::samplers::testing
