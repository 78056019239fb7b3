#include "format/kieker_log.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "format/kieker_bin.hpp"
#include "format/log_reader.hpp"
#include "format_test_support.hpp"

namespace sonde::format {
namespace {

namespace fs = std::filesystem;

using test::describe_record;
using test::TempDir;
using test::testdata;

// Owns copies: the reader's strings die with the reader.
class LogCollect : public RecordSink {
 public:
  bool on_record(const Record& r) override {
    ++per_class[r.schema->class_name];
    records.push_back(describe_record(r));
    return static_cast<int>(records.size()) != stop_after;
  }
  std::map<std::string, size_t> per_class;
  std::vector<std::string> records;
  int stop_after = -1;
};

// Writes what it reads into a KiekerLogWriter.
class Copy : public RecordSink {
 public:
  explicit Copy(KiekerLogWriter& w) : w_(w) {}
  bool on_record(const Record& r) override { return w_.write(r); }

 private:
  KiekerLogWriter& w_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<std::string> data_files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != "kieker.map") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

const std::string kMeta(kieker_class::kMetadata);
const std::string kTrace(kieker_class::kTraceMetadata);
const std::string kBefore(kieker_class::kBeforeOperation);
const std::string kAfter(kieker_class::kAfterOperation);
const std::string kExec(kieker_class::kOperationExecution);

// Counts taken with `cut -d';' -f1 <file>.dat | sort | uniq -c` on the fixtures.
TEST(KiekerLog, ReadsEveryRecordOfTheTestdataLogs) {
  struct Case {
    const char* dir;
    std::map<std::string, size_t> counts;
  };
  const Case cases[] = {
      {"kieker/bookstore-oer-2010/log", {{kMeta, 1}, {kExec, 6540}}},
      {"kieker/events-2014/log", {{kMeta, 1}, {kTrace, 2}, {kBefore, 5}, {kAfter, 5}}},
      {"kieker/events-2017-singleton/log", {{kMeta, 1}, {kTrace, 1}, {kBefore, 52}, {kAfter, 52}}},
  };
  for (const Case& c : cases) {
    LogCollect sink;
    LogReadStats stats = read_kieker_directory(testdata(c.dir), sink);
    EXPECT_TRUE(stats.ok) << c.dir;
    EXPECT_TRUE(stats.errors.empty()) << (stats.errors.empty() ? "" : stats.errors[0]);
    EXPECT_TRUE(stats.warnings.empty()) << c.dir;
    EXPECT_EQ(stats.files.size(), 1u);
    EXPECT_EQ(stats.skipped, 0u);
    EXPECT_EQ(sink.per_class, c.counts) << c.dir;
    size_t total = 0;
    for (auto& [k, n] : c.counts) total += n;
    EXPECT_EQ(stats.records, total);
  }
}

TEST(KiekerLog, DatWriterReproducesKiekersFileAndRolls) {
  const std::string src = testdata("kieker/events-2017-singleton/log");
  TempDir tmp;
  const std::string out = tmp / "log";
  {
    KiekerLogWriter w(out, KiekerLogMode::kDat, 25);
    Copy copy(w);
    LogReadStats stats = read_kieker_directory(src, copy);
    EXPECT_EQ(stats.records, 106u);
    ASSERT_TRUE(w.close()) << w.error();
    EXPECT_EQ(w.records_written(), 106u);
    EXPECT_EQ(w.data_files(), 5u);
    EXPECT_EQ(w.strings_altered(), 0u);
  }
  // Same first-use order of types, so the map and the lines are Kieker's own.
  EXPECT_EQ(slurp(out + "/kieker.map"), slurp(src + "/kieker.map"));
  std::vector<std::string> names = data_files(out);
  ASSERT_EQ(names.size(), 5u);
  std::string joined;
  const std::regex pattern(R"(kieker-\d{8}-\d{9}-UTC-00[1-5]\.dat)");
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_TRUE(std::regex_match(names[i], pattern)) << names[i];
    EXPECT_EQ(names[i].substr(names[i].size() - 7), "00" + std::to_string(i + 1) + ".dat");
    joined += slurp(out + "/" + names[i]);
  }
  EXPECT_EQ(joined, slurp(src + "/kieker-20170805-132412202-UTC-000-Thread-1.dat"));
}

Record nasty(const RecordSchema* s, std::string_view text) {
  Record r;
  reset_to_defaults(r, s);
  r.logging_timestamp = 9;
  r.values = {int64_t{1}, int64_t{2}, int64_t{3}, text, std::string_view("cls")};
  return r;
}

TEST(KiekerLog, BinWriterRoundTripsEveryRecordAndArbitraryStrings) {
  TempDir tmp;
  LogCollect original;
  read_kieker_directory(testdata("kieker/bookstore-oer-2010/log"), original);
  const std::string out = tmp / "bin";
  const std::string weird = "a;b\nc\r\\n\\\xE2\x82\xAC";
  {
    KiekerLogWriter w(out, KiekerLogMode::kBin, 1000);
    Copy copy(w);
    read_kieker_directory(testdata("kieker/bookstore-oer-2010/log"), copy);
    ASSERT_TRUE(w.write(nasty(find_builtin_schema(kBefore), weird)));
    ASSERT_TRUE(w.close()) << w.error();
    EXPECT_EQ(w.data_files(), 7u);
    EXPECT_EQ(w.strings_altered(), 0u);
  }
  LogCollect back;
  LogReadStats stats = read_kieker_directory(out, back);
  EXPECT_TRUE(stats.ok) << (stats.errors.empty() ? "" : stats.errors[0]);
  EXPECT_EQ(stats.files.size(), 7u);
  ASSERT_EQ(back.records.size(), original.records.size() + 1);
  back.records.pop_back();
  EXPECT_EQ(back.records, original.records);
  EXPECT_EQ(back.per_class[kBefore], 1u);
  // .bin: the map holds every string, escaped so that the newline stays on one line.
  std::string map = slurp(out + "/kieker.map");
  EXPECT_NE(map.find("=a;b\\nc\\r\\\\n\\\\\xE2\x82\xAC\n"), std::string::npos);
  EXPECT_EQ(map.rfind("$0=" + kMeta + "\n", 0), 0u) << map.substr(0, 300);
  EXPECT_NE(map.find("=SRV1\n"), std::string::npos) << map.substr(0, 300);
}

TEST(KiekerLog, DatWriterCountsAlteredStrings) {
  TempDir tmp;
  {
    KiekerLogWriter w(tmp / "d", KiekerLogMode::kDat);
    ASSERT_TRUE(w.write(nasty(find_builtin_schema(kBefore), "x;y")));
    ASSERT_TRUE(w.write(nasty(find_builtin_schema(kBefore), "fine")));
    EXPECT_EQ(w.strings_altered(), 1u);
    Record wrong;
    reset_to_defaults(wrong, find_builtin_schema(kBefore));
    wrong.values[0] = std::string_view("not a number");
    EXPECT_FALSE(w.write(wrong));
    EXPECT_NE(w.error().find("does not match its schema"), std::string::npos);
    EXPECT_FALSE(w.failed());
    EXPECT_TRUE(w.close());
  }
  LogCollect back;
  read_kieker_directory(tmp / "d", back);
  ASSERT_EQ(back.records.size(), 2u);
  EXPECT_NE(back.records[0].find("|x_y|"), std::string::npos);
}

void gzip_file(const std::string& from, const std::string& to) {
  std::string bytes = slurp(from);
  gzFile gz = gzopen(to.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(gz);
  fs::remove(from);
}

TEST(KiekerLog, ReadsGzipDataFilesIncludingKiekersBareGzNames) {
  LogCollect original;
  read_kieker_directory(testdata("kieker/events-2014/log"), original);
  for (KiekerLogMode mode : {KiekerLogMode::kDat, KiekerLogMode::kBin}) {
    TempDir tmp;
    const std::string out = tmp / "log";
    {
      KiekerLogWriter w(out, mode, 5);
      Copy copy(w);
      read_kieker_directory(testdata("kieker/events-2014/log"), copy);
      ASSERT_TRUE(w.close());
    }
    std::vector<std::string> names = data_files(out);
    ASSERT_EQ(names.size(), 3u);
    gzip_file(out + "/" + names[0], out + "/" + names[0] + ".gz");       // .dat.gz / .bin.gz
    std::string bare = names[1].substr(0, names[1].size() - 4) + ".gz";  // Kieker's GZip filter
    gzip_file(out + "/" + names[1], out + "/" + bare);
    LogCollect back;
    LogReadStats stats = read_kieker_directory(out, back);
    EXPECT_TRUE(stats.ok) << (stats.errors.empty() ? "" : stats.errors[0]);
    EXPECT_TRUE(stats.warnings.empty()) << stats.warnings[0];
    EXPECT_EQ(back.records, original.records);
  }
}

// Every compression is read (kieker_compression_test.cpp); junk behind a
// compression name is an error naming the file, never misread as records.
TEST(KiekerLog, JunkBehindCompressionNamesIsReportedNotMisread) {
  TempDir tmp;
  fs::copy(testdata("kieker/events-2014/log"), tmp.path(), fs::copy_options::recursive);
  spit(tmp / "kieker-20200101-000000000-UTC-002.dat.xz",
       "\xFD"
       "7zXZ junk");
  spit(tmp / "kieker-20200101-000000000-UTC-003.gz", "BZh9 but no bzip2 block follows");
  spit(tmp / "kieker-20200101-000000000-UTC-004.zip", "PK junk");
  spit(tmp / "notes.txt", "ignored");
  LogCollect back;
  LogReadStats stats = read_kieker_directory(tmp.path(), back);
  EXPECT_EQ(stats.records, 13u);
  EXPECT_FALSE(stats.ok);
  ASSERT_EQ(stats.errors.size(), 3u);
  EXPECT_EQ(stats.errors[0].rfind(tmp / "kieker-20200101-000000000-UTC-002.dat.xz: not xz data", 0),
            0u)
      << stats.errors[0];
  // A bzip2 signature in a .gz file is Kieker's BZip2 filter: decoded, found corrupt.
  EXPECT_EQ(
      stats.errors[1].rfind(tmp / "kieker-20200101-000000000-UTC-003.gz: corrupt bzip2 data", 0),
      0u)
      << stats.errors[1];
  EXPECT_EQ(stats.errors[2].rfind(tmp / "kieker-20200101-000000000-UTC-004.zip: not zip data", 0),
            0u)
      << stats.errors[2];
}

TEST(KiekerLog, UnknownTypesAreSkippedInDatAndStopBin) {
  TempDir tmp;
  spit(tmp / "kieker.map", "$0=com.example.Custom\n$1=" + kBefore + "\n$2=op\n$3=cls\n");
  spit(tmp / "a.dat", "$0;1;whatever;fields\n$1;2;3;4;0;op;cls\n$0;3;more\n");
  std::string bin;
  bin += std::string("\0\0\0\1", 4) + std::string(8 + 8 + 8, '\0') + std::string("\0\0\0\0", 4) +
         std::string("\0\0\0\2\0\0\0\3", 8);                 // one BeforeOperationEvent
  bin += std::string("\0\0\0\0", 4) + std::string(30, 'z');  // Custom: length unknown
  spit(tmp / "b.bin", bin);
  LogCollect back;
  LogReadStats stats = read_kieker_directory(tmp.path(), back);
  EXPECT_EQ(stats.records, 2u);
  EXPECT_EQ(stats.skipped, 3u);
  EXPECT_TRUE(stats.errors.empty());
  ASSERT_EQ(stats.warnings.size(), 2u);
  EXPECT_EQ(stats.warnings[0], tmp / "a.dat" +
                                   ": skipped 2 record(s) of type com.example.Custom (no built-in "
                                   "schema)");
  EXPECT_NE(stats.warnings[1].find(tmp / "b.bin" + ": offset 40: record type com.example.Custom"),
            std::string::npos)
      << stats.warnings[1];
  EXPECT_NE(stats.warnings[1].find("(34 bytes not read)"), std::string::npos);
}

TEST(KiekerLog, MalformedInputNamesFileAndPosition) {
  TempDir tmp;
  spit(tmp / "kieker.map", "$0=" + kBefore + "\nbroken line\n");
  spit(tmp / "a.dat", "$0;1;2;3;0;op;cls\n$0;1;2\n$0;1;2;3;1;op;cls\n");
  spit(tmp / "b.bin", std::string("\0\0\0\0", 4) + std::string(20, '\0'));
  LogCollect back;
  LogReadStats stats = read_kieker_directory(tmp.path(), back);
  EXPECT_FALSE(stats.ok);
  EXPECT_EQ(stats.records, 2u);
  ASSERT_EQ(stats.errors.size(), 2u);
  EXPECT_EQ(stats.errors[0].rfind(tmp / "kieker.map:2: malformed map entry", 0), 0u)
      << stats.errors[0];
  EXPECT_EQ(stats.errors[1].rfind(tmp / "a.dat: line 2: line ends before field", 0), 0u)
      << stats.errors[1];
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_EQ(stats.warnings[0], tmp / "b.bin" +
                                   ": offset 0: file ends inside a record (24 bytes present, at "
                                   "least 40 needed)");
}

TEST(KiekerLog, NotAKiekerDirectory) {
  TempDir tmp;
  LogCollect sink;
  LogReadStats a = read_kieker_directory(tmp.path(), sink);
  EXPECT_FALSE(a.ok);
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("no .map file"), std::string::npos);
  LogReadStats b = read_kieker_directory(tmp / "missing", sink);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.errors.at(0).find("not a directory"), std::string::npos);
}

TEST(KiekerLog, SinkStopsReading) {
  LogCollect sink;
  sink.stop_after = 10;
  LogReadStats stats = read_kieker_directory(testdata("kieker/bookstore-oer-2010/log"), sink);
  EXPECT_EQ(sink.records.size(), 10u);
  EXPECT_EQ(stats.records, 10u);
}

TEST(KiekerLog, UnwritableDirectoryGivesAClearError) {
  TempDir tmp;
  spit(tmp / "file", "x");
  KiekerLogWriter w(tmp / "file/sub", KiekerLogMode::kDat);
  EXPECT_TRUE(w.failed());
  EXPECT_NE(w.error().find(tmp / "file/sub"), std::string::npos) << w.error();
  EXPECT_FALSE(w.write(nasty(find_builtin_schema(kBefore), "op")));
  EXPECT_FALSE(w.flush());
  EXPECT_FALSE(w.close());
}

TEST(KiekerLog, ExistingLogIsNotOverwritten) {
  TempDir tmp;
  spit(tmp / "kieker.map", "$0=x\n");
  KiekerLogWriter w(tmp.path(), KiekerLogMode::kBin);
  EXPECT_TRUE(w.failed());
  EXPECT_NE(w.error().find("kieker.map"), std::string::npos);
  EXPECT_NE(w.error().find("exists"), std::string::npos) << w.error();
  EXPECT_EQ(slurp(tmp / "kieker.map"), "$0=x\n");
}

TEST(KiekerLog, FullDiskGivesAClearErrorNotACrash) {
  TempDir tmp;
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of a signal
  rlimit small = old;
  small.rlim_cur = 20000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  KiekerLogWriter w(tmp / "log", KiekerLogMode::kDat);
  bool ok = true;
  for (int i = 0; i < 2000 && ok; ++i) ok = w.write(nasty(find_builtin_schema(kBefore), "op"));
  ok = ok && w.flush();
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(w.failed());
  EXPECT_NE(w.error().find("cannot write " + tmp / "log/kieker-"), std::string::npos) << w.error();
  EXPECT_NE(w.error().find("File too large"), std::string::npos) << w.error();
  EXPECT_FALSE(w.write(nasty(find_builtin_schema(kBefore), "op")));
}

}  // namespace
}  // namespace sonde::format
