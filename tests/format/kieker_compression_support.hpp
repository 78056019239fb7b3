// Helpers shared by the compressed Kieker log tests: scratch directories,
// record capture, running the real command-line compressors.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "format/kieker_log.hpp"
#include "format/log_reader.hpp"
#include "format_test_support.hpp"

namespace sonde::format::compression_test {

namespace fs = std::filesystem;
using test::describe_record;
using test::TempDir;
using test::testdata;

// The real Kieker logs every variant is made from.
inline const std::vector<std::string>& kieker_logs() {
  static const std::vector<std::string> logs = {
      testdata("kieker/bookstore-oer-2010/log"),
      testdata("kieker/events-2014/log"),
      testdata("kieker/events-2017-singleton/log"),
  };
  return logs;
}


class Collect : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    records.push_back(describe_record(r));
    return true;
  }
  std::vector<std::string> records;
};

class Copy : public RecordSink {
 public:
  explicit Copy(KiekerLogWriter& w) : w_(w) {}
  bool on_record(const Record& r) override { return w_.write(r); }

 private:
  KiekerLogWriter& w_;
};

struct ReadBack {
  LogReadStats stats;
  std::vector<std::string> records;
};

inline ReadBack read_back(const std::string& dir) {
  Collect sink;
  ReadBack r;
  r.stats = read_kieker_directory(dir, sink);
  r.records = std::move(sink.records);
  return r;
}

inline std::string first(const std::vector<std::string>& v) { return v.empty() ? "" : v[0]; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Single-quotes `s` for /bin/sh.
inline std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command; true when it exits 0.
inline bool sh(const std::string& command) { return std::system(command.c_str()) == 0; }

// Data files of a log directory (everything but *.map), sorted.
inline std::vector<std::string> data_files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".map") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A writable copy of a log directory.
inline void copy_log(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) {
    fs::copy_file(e.path(), to + "/" + e.path().filename().string());
    fs::permissions(to + "/" + e.path().filename().string(),
                    fs::perms::owner_read | fs::perms::owner_write);
  }
}

}  // namespace sonde::format::compression_test
