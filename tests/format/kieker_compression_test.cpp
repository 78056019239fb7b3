// Reading compressed Kieker logs: every variant Kieker's writers produce (and
// the compound names older writers use), made from the real logs in
// tests/data with the real command-line tools, must read back to
// exactly the records of the uncompressed log. Damaged files must give a
// warning or an error naming the file, never a crash or invented records.
// Over 500 lines: one case per container and damage, over the variants
// made once by kieker_compression_support.hpp; the writer's cases are in
// kieker_compressed_writer_test.cpp.
#include <zlib.h>

#include <functional>
#include <map>

#include "format/compressed_input.hpp"
#include "kieker_compression_support.hpp"

namespace sonde::format::compression_test {
namespace {

// kieker-...-001.dat -> kieker-...-001
std::string stem(const std::string& name) { return name.substr(0, name.size() - 4); }

// zlib (RFC 1950) as java.util.zip.DeflaterOutputStream writes it; no
// command-line tool of Debian writes it, so zlib itself does.
bool zlib_file(const std::string& from, const std::string& to) {
  const std::string in = slurp(from);
  uLongf size = compressBound(in.size());
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(in.data()), in.size(),
                Z_DEFAULT_COMPRESSION) != Z_OK) {
    return false;
  }
  out.resize(size);
  spit(to, out);
  return true;
}

// Compresses `dir/name` into its variant's file and removes the original.
struct Variant {
  const char* label;
  std::function<bool(const std::string& dir, const std::string& name)> make;
};

const std::vector<Variant>& variants() {
  auto tool = [](std::string command, std::string (*target)(const std::string&)) {
    return [command, target](const std::string& dir, const std::string& name) {
      return sh("cd " + shell_quoted(dir) + " && " + command + " " + shell_quoted(name) + " > " +
                shell_quoted(target(name)));
    };
  };
  static const std::vector<Variant> all = {
      {"gzip .dat.gz (older writers, sonde)",
       tool("gzip -n -c", [](const std::string& n) { return n + ".gz"; })},
      {"gzip bare .gz (Kieker GZip filter)",
       tool("gzip -n -c", [](const std::string& n) { return stem(n) + ".gz"; })},
      {"bzip2 bare .gz (Kieker BZip2 filter)",
       tool("bzip2 -c", [](const std::string& n) { return stem(n) + ".gz"; })},
      {"bzip2 .dat.bz2", tool("bzip2 -c", [](const std::string& n) { return n + ".bz2"; })},
      {"bzip2 bare .bz2", tool("bzip2 -c", [](const std::string& n) { return stem(n) + ".bz2"; })},
      {"xz .dat.xz", tool("xz -c", [](const std::string& n) { return n + ".xz"; })},
      {"xz bare .xz (Kieker XZ filter)",
       tool("xz -c", [](const std::string& n) { return stem(n) + ".xz"; })},
      {"zlib bare .df (Kieker Deflate filter)",
       [](const std::string& dir, const std::string& name) {
         return zlib_file(dir + "/" + name, dir + "/" + stem(name) + ".df");
       }},
      {"zlib .dat.df",
       [](const std::string& dir, const std::string& name) {
         return zlib_file(dir + "/" + name, dir + "/" + name + ".df");
       }},
      {"zip .dat.zip (older writers, sonde)",
       [](const std::string& dir, const std::string& name) {
         return sh("cd " + shell_quoted(dir) + " && zip -q " + shell_quoted(name + ".zip") + " " +
                   shell_quoted(name));
       }},
      {"zip stored (zip -0)",
       [](const std::string& dir, const std::string& name) {
         return sh("cd " + shell_quoted(dir) + " && zip -q -0 " + shell_quoted(name + ".zip") +
                   " " + shell_quoted(name));
       }},
      // Written to a pipe, zip cannot seek back: sizes and CRC go into a data
      // descriptor after the data, as java.util.zip.ZipOutputStream writes them.
      {"zip streamed (data descriptor)",
       [](const std::string& dir, const std::string& name) {
         return sh("cd " + shell_quoted(dir) + " && zip -q - " + shell_quoted(name) + " | cat > " +
                   shell_quoted(name + ".zip"));
       }},
      {"zip64 streamed (zip -fz)",
       [](const std::string& dir, const std::string& name) {
         return sh("cd " + shell_quoted(dir) + " && zip -q -fz - " + shell_quoted(name) +
                   " | cat > " + shell_quoted(name + ".zip"));
       }},
      // Kieker's Zip filter: bare .zip, one entry named <file>.zip.dat even for binary data.
      {"zip bare .zip (Kieker Zip filter)",
       [](const std::string& dir, const std::string& name) {
         const std::string entry = stem(name) + ".zip.dat";
         return sh("cd " + shell_quoted(dir) + " && mkdir -p stage && cp " + shell_quoted(name) +
                   " stage/" + shell_quoted(entry) + " && zip -q -j " +
                   shell_quoted(stem(name) + ".zip") + " stage/" + shell_quoted(entry) +
                   " && rm -r stage");
       }},
  };
  return all;
}

// A writable uncompressed log: the original .dat log, or the same records
// rewritten as .bin (the repository has no .bin sample), several files long.
std::string plain_log(const TempDir& tmp, const std::string& log, KiekerLogMode mode) {
  const std::string dir = tmp / (mode == KiekerLogMode::kDat ? "plain-dat" : "plain-bin");
  if (mode == KiekerLogMode::kDat) {
    copy_log(log, dir);
  } else {
    KiekerLogWriter w(dir, KiekerLogMode::kBin, 2500);
    Copy copy(w);
    read_kieker_directory(log, copy);
    EXPECT_TRUE(w.close()) << w.error();
  }
  return dir;
}

// Applies `v` to every data file of a copy of `plain`.
std::string compressed_copy(const std::string& plain, const std::string& to, const Variant& v) {
  copy_log(plain, to);
  for (const std::string& name : data_files(to)) {
    EXPECT_TRUE(v.make(to, name)) << v.label << " on " << name;
    fs::remove(to + "/" + name);
  }
  return to;
}

TEST(KiekerCompression, EveryVariantReadsBackEveryRecordOfTheRealLogs) {
  for (const std::string& log : kieker_logs()) {
    const std::vector<std::string> original = read_back(log).records;
    ASSERT_GT(original.size(), 10u) << log;
    for (KiekerLogMode mode : {KiekerLogMode::kDat, KiekerLogMode::kBin}) {
      TempDir tmp;
      const std::string plain = plain_log(tmp, log, mode);
      const size_t files = data_files(plain).size();
      int n = 0;
      for (const Variant& v : variants()) {
        const std::string dir = compressed_copy(plain, tmp / std::to_string(n++), v);
        const std::string what =
            log + " " + (mode == KiekerLogMode::kDat ? "dat" : "bin") + " as " + v.label;
        ReadBack back = read_back(dir);
        EXPECT_TRUE(back.stats.ok) << what << ": " << first(back.stats.errors);
        EXPECT_TRUE(back.stats.warnings.empty()) << what << ": " << first(back.stats.warnings);
        EXPECT_EQ(back.stats.files.size(), files) << what;
        EXPECT_EQ(back.stats.skipped, 0u) << what;
        EXPECT_EQ(back.records.size(), original.size()) << what;
        EXPECT_TRUE(back.records == original) << what;
      }
    }
  }
}

const std::string kBookstore = testdata("kieker/bookstore-oer-2010/log");
const std::string kBookstoreData = "kieker-20100830-082225582-UTC-Thread-2.dat";

// One compressed data file of the bookstore log (6541 records), by a real tool.
struct Damageable {
  const char* compression;  // as messages name it
  const char* file;         // name in the log directory
  std::string command;      // turns the .dat into `file`, run in the log directory; "": zlib
};

std::vector<Damageable> damageables() {
  const std::string d = shell_quoted(kBookstoreData);
  return {
      {"gzip", "data.dat.gz", "gzip -n -c " + d + " > data.dat.gz"},
      {"xz", "data.dat.xz", "xz -c " + d + " > data.dat.xz"},
      // -1: 100 kB blocks, so half a file still holds complete blocks.
      {"bzip2", "data.dat.bz2", "bzip2 -1 -c " + d + " > data.dat.bz2"},
      {"zip", "data.dat.zip", "zip -q data.dat.zip " + d},
      {"zlib (deflate)", "data.dat.df", ""},
  };
}

// A log directory holding only `c`'s file made from the bookstore log. The
// compressed bytes are made once per format and copied.
std::string damageable_log(const TempDir& tmp, const Damageable& c) {
  static std::map<std::string, std::string> made;
  const std::string dir = tmp / c.file;
  copy_log(kBookstore, dir);
  const std::string path = dir + "/" + c.file;
  if (auto it = made.find(c.file); it != made.end()) {
    spit(path, it->second);
  } else if (c.command.empty()) {
    EXPECT_TRUE(zlib_file(dir + "/" + kBookstoreData, path));
  } else {
    EXPECT_TRUE(sh("cd " + shell_quoted(dir) + " && " + c.command)) << c.command;
  }
  made[c.file] = slurp(path);
  fs::remove(dir + "/" + kBookstoreData);
  return dir;
}

bool is_prefix(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  return part.size() <= whole.size() && std::equal(part.begin(), part.end(), whole.begin());
}

bool has_prefix(const std::vector<std::string>& messages, const std::string& prefix) {
  return std::any_of(messages.begin(), messages.end(),
                     [&](const std::string& m) { return m.rfind(prefix, 0) == 0; });
}

TEST(KiekerCompression, TruncatedFilesAreReadUpToTheCutWithAWarning) {
  const std::vector<std::string> original = read_back(kBookstore).records;
  for (const Damageable& c : damageables()) {
    TempDir tmp;
    const std::string dir = damageable_log(tmp, c);
    const std::string path = dir + "/" + c.file;
    fs::resize_file(path, fs::file_size(path) / 2);
    ReadBack back = read_back(dir);
    EXPECT_TRUE(has_prefix(back.stats.warnings,
                           path + ": " + c.compression + " stream is truncated (the file ends "))
        << c.compression << ": " << first(back.stats.warnings) << " / " << first(back.stats.errors);
    EXPECT_TRUE(back.stats.errors.empty()) << first(back.stats.errors);
    // The records before the cut, exactly; the line the cut went through is dropped.
    EXPECT_GT(back.records.size(), 0u) << c.compression;
    EXPECT_LT(back.records.size(), original.size()) << c.compression;
    EXPECT_TRUE(is_prefix(back.records, original)) << c.compression;
    EXPECT_EQ(back.stats.files.size(), 1u);
  }
}

TEST(KiekerCompression, FilesCutInsideTheirHeaderOrEmptyWarnAndReadNothing) {
  for (const Damageable& c : damageables()) {
    for (uintmax_t size : {0, 1, 3}) {
      TempDir tmp;
      const std::string dir = damageable_log(tmp, c);
      const std::string path = dir + "/" + c.file;
      fs::resize_file(path, size);
      ReadBack back = read_back(dir);
      EXPECT_TRUE(back.records.empty());
      EXPECT_TRUE(
          has_prefix(back.stats.warnings, path + ": " + c.compression + " stream is truncated") ||
          has_prefix(back.stats.errors, path + ": "))
          << c.compression << " cut to " << size << ": " << first(back.stats.warnings) << " / "
          << first(back.stats.errors);
    }
  }
}

// Overwrites `n` bytes at `offset` (negative: from the end) with `byte`.
void damage(const std::string& path, long offset, size_t n, char byte) {
  std::string bytes = slurp(path);
  const size_t at = offset >= 0 ? static_cast<size_t>(offset) : bytes.size() + offset;
  for (size_t i = 0; i < n && at + i < bytes.size(); ++i) bytes[at + i] ^= byte;
  spit(path, bytes);
}

// Where each format keeps the check value of the data (flipping it must be
// caught), and the library message it gives.
TEST(KiekerCompression, WrongChecksumsAreErrorsNamingTheFileAndTheLibrarysMessage) {
  struct Check {
    const char* compression;
    long offset;
    const char* message;
  };
  const Check checks[] = {
      {"gzip", -8, "incorrect data check"},               // CRC-32 in the trailer
      {"xz", -12, "LZMA_DATA_ERROR"},                     // CRC-32 of the stream footer
      {"bzip2", -6, "BZ_DATA_ERROR"},                     // combined stream CRC
      {"zip", 14, "does not match its recorded CRC-32"},  // CRC-32 in the local header
      {"zlib (deflate)", -4, "incorrect data check"},     // Adler-32 trailer
  };
  for (const Damageable& c : damageables()) {
    const Check* check = nullptr;
    for (const Check& k : checks) {
      if (std::string(k.compression) == c.compression) check = &k;
    }
    ASSERT_NE(check, nullptr);
    TempDir tmp;
    const std::string dir = damageable_log(tmp, c);
    const std::string path = dir + "/" + c.file;
    damage(path, check->offset, 1, 0x5a);
    ReadBack back = read_back(dir);
    EXPECT_FALSE(back.stats.ok) << c.compression;
    ASSERT_EQ(back.stats.errors.size(), 1u) << c.compression << ": " << first(back.stats.warnings);
    const std::string& e = back.stats.errors[0];
    EXPECT_EQ(e.rfind(path + ": corrupt " + c.compression + " data: ", 0), 0u) << e;
    EXPECT_NE(e.find(check->message), std::string::npos) << e;
    EXPECT_TRUE(is_prefix(back.records, read_back(kBookstore).records)) << c.compression;
  }
}

// Garbage in the middle of the compressed data: whatever the library makes
// of it, the file is named and nothing crashes (run this under ASan too).
TEST(KiekerCompression, GarbageInsideTheDataIsReportedNamingTheFile) {
  for (const Damageable& c : damageables()) {
    for (char pattern : {'\xff', '\x01', '\x80'}) {
      TempDir tmp;
      const std::string dir = damageable_log(tmp, c);
      const std::string path = dir + "/" + c.file;
      damage(path, static_cast<long>(fs::file_size(path) / 3), 64, pattern);
      ReadBack back = read_back(dir);
      EXPECT_TRUE(has_prefix(back.stats.errors, path + ": ") ||
                  has_prefix(back.stats.warnings, path + ": "))
          << c.compression;
    }
  }
}

TEST(KiekerCompression, ConcatenatedStreamsAreReadToTheLastOne) {
  const std::vector<std::string> original = read_back(kBookstore).records;
  for (auto [tool, ext] :
       {std::pair{"gzip -n -c", ".gz"}, {"bzip2 -c", ".bz2"}, {"xz -c", ".xz"}}) {
    TempDir tmp;
    const std::string dir = tmp / "log";
    copy_log(kBookstore, dir);
    // Split at a line boundary, compress the parts separately, concatenate.
    const std::string cmd = "cd " + shell_quoted(dir) + " && split -l 3000 " +
                            shell_quoted(kBookstoreData) + " part. && for p in part.*; do " + tool +
                            " $p; done > data" + ext + " && rm part.* " +
                            shell_quoted(kBookstoreData);
    ASSERT_TRUE(sh(cmd)) << cmd;
    ReadBack back = read_back(dir);
    EXPECT_TRUE(back.stats.ok) << tool << ": " << first(back.stats.errors);
    EXPECT_TRUE(back.stats.warnings.empty()) << tool << ": " << first(back.stats.warnings);
    EXPECT_TRUE(back.records == original) << tool;
  }
}

TEST(KiekerCompression, BytesAfterTheStreamAreIgnoredWithAWarning) {
  TempDir tmp;
  const std::string dir = tmp / "log";
  copy_log(kBookstore, dir);
  ASSERT_TRUE(sh("cd " + shell_quoted(dir) + " && gzip -n " + shell_quoted(kBookstoreData) +
                 " && printf 'junk' >> " + shell_quoted(kBookstoreData + ".gz")));
  const std::string path = dir + "/" + kBookstoreData + ".gz";
  ReadBack back = read_back(dir);
  EXPECT_TRUE(back.stats.ok) << first(back.stats.errors);
  ASSERT_EQ(back.stats.warnings.size(), 1u);
  EXPECT_EQ(back.stats.warnings[0], path + ": data after the end of the gzip stream (from offset " +
                                        std::to_string(fs::file_size(path) - 4) + ") ignored");
  EXPECT_TRUE(back.records == read_back(kBookstore).records);
}

TEST(KiekerCompression, ContentDecidesWhenItContradictsTheName) {
  const std::vector<std::string> original = read_back(kBookstore).records;
  TempDir tmp;
  const std::string dir = tmp / "log";
  copy_log(kBookstore, dir);
  // gzip data named .xz, and gzip data named as if uncompressed.
  ASSERT_TRUE(sh("cd " + shell_quoted(dir) + " && head -n 3000 " + shell_quoted(kBookstoreData) +
                 " | gzip -n > a.dat.xz && tail -n +3001 " + shell_quoted(kBookstoreData) +
                 " | gzip -n > b.dat && rm " + shell_quoted(kBookstoreData)));
  ReadBack back = read_back(dir);
  EXPECT_TRUE(back.stats.ok) << first(back.stats.errors);
  ASSERT_EQ(back.stats.warnings.size(), 2u);
  EXPECT_EQ(back.stats.warnings[0],
            dir + "/a.dat.xz: gzip data despite the .xz extension; read as gzip");
  EXPECT_EQ(back.stats.warnings[1],
            dir + "/b.dat: gzip data despite a name without a compression extension; read as gzip");
  EXPECT_TRUE(back.records == original);
}

TEST(KiekerCompression, UncompressedDataBehindACompressionNameIsAnError) {
  TempDir tmp;
  const std::string dir = tmp / "log";
  copy_log(kBookstore, dir);
  fs::rename(dir + "/" + kBookstoreData, dir + "/data.dat.gz");
  ReadBack back = read_back(dir);
  EXPECT_FALSE(back.stats.ok);
  ASSERT_EQ(back.stats.errors.size(), 1u);
  EXPECT_EQ(back.stats.errors[0], dir +
                                      "/data.dat.gz: not gzip data despite the .gz extension (no "
                                      "known compression signature); file skipped");
  EXPECT_TRUE(back.records.empty());
  EXPECT_TRUE(back.stats.files.empty());
}

// zip archives with other than one data entry.
class ZipEntries : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_log(testdata("kieker/events-2014/log"), dir_);
    data_ = data_files(dir_).at(0);
    spit(dir_ + "/readme.txt", "not a log\n");
    original_ = read_back(testdata("kieker/events-2014/log")).records;
  }
  bool zip(const std::string& archive, const std::string& files) {
    return sh("cd " + shell_quoted(dir_) + " && zip -q " + archive + " " + files);
  }
  void remove_inputs() {
    fs::remove(dir_ + "/" + data_);
    fs::remove(dir_ + "/readme.txt");
  }
  TempDir tmp_;
  const std::string dir_ = tmp_ / "log";
  std::string data_;
  std::vector<std::string> original_;
};

TEST_F(ZipEntries, OtherEntriesBeforeTheDataEntryAreSkippedWithAWarning) {
  ASSERT_TRUE(zip("both.zip", "readme.txt " + shell_quoted(data_)));
  remove_inputs();
  ReadBack back = read_back(dir_);
  EXPECT_TRUE(back.stats.ok) << first(back.stats.errors);
  ASSERT_EQ(back.stats.warnings.size(), 1u);
  EXPECT_EQ(back.stats.warnings[0],
            dir_ + "/both.zip: zip entry readme.txt ignored (not named *.dat or *.bin)");
  EXPECT_TRUE(back.records == original_);
}

TEST_F(ZipEntries, EntriesAfterTheDataEntryAreNotReadWithAWarning) {
  ASSERT_TRUE(zip("both.zip", shell_quoted(data_) + " readme.txt"));
  remove_inputs();
  ReadBack back = read_back(dir_);
  EXPECT_TRUE(back.stats.ok) << first(back.stats.errors);
  ASSERT_EQ(back.stats.warnings.size(), 1u);
  EXPECT_EQ(back.stats.warnings[0], dir_ + "/both.zip: zip archive holds more entries after " +
                                        data_ + " (next: readme.txt); only " + data_ + " was read");
  EXPECT_TRUE(back.records == original_);
}

TEST_F(ZipEntries, AnArchiveWithoutADataEntryIsAnError) {
  ASSERT_TRUE(zip("notes.zip", "readme.txt"));
  remove_inputs();
  ReadBack back = read_back(dir_);
  EXPECT_FALSE(back.stats.ok);
  ASSERT_EQ(back.stats.errors.size(), 1u);
  EXPECT_EQ(back.stats.errors[0], dir_ +
                                      "/notes.zip: zip archive holds no entry named *.dat or "
                                      "*.bin (entries: readme.txt); file skipped");
}

TEST_F(ZipEntries, AnEmptyArchiveIsAnError) {
  remove_inputs();
  // What `zip` leaves when its last entry is deleted: the end record alone.
  spit(dir_ + "/empty.zip", std::string("PK\x05\x06", 4) + std::string(18, '\0'));
  ReadBack back = read_back(dir_);
  EXPECT_FALSE(back.stats.ok);
  ASSERT_EQ(back.stats.errors.size(), 1u);
  EXPECT_EQ(back.stats.errors[0], dir_ + "/empty.zip: zip archive holds no entry; file skipped");
}

TEST_F(ZipEntries, AnArchiveCutAfterItsEntryWarnsButKeepsEveryRecord) {
  ASSERT_TRUE(zip("data.zip", shell_quoted(data_)));
  remove_inputs();
  // Cut off the central directory (46 bytes + name) and the end record (22 bytes).
  const std::string path = dir_ + "/data.zip";
  const std::string bytes = slurp(path);
  spit(path, bytes.substr(0, bytes.rfind(std::string("PK\x01\x02", 4))));
  ReadBack back = read_back(dir_);
  EXPECT_TRUE(back.stats.ok) << first(back.stats.errors);
  ASSERT_EQ(back.stats.warnings.size(), 1u);
  EXPECT_EQ(back.stats.warnings[0], path + ": zip archive ends after entry " + data_ +
                                        " without a central directory (cut short?); the entry "
                                        "is complete");
  EXPECT_TRUE(back.records == original_);
}

TEST(KiekerCompression, CompressedMapsAndOtherFilesAreNotMistakenForData) {
  TempDir tmp;
  const std::string dir = tmp / "log";
  copy_log(testdata("kieker/events-2014/log"), dir);
  ASSERT_TRUE(sh("cd " + shell_quoted(dir) +
                 " && gzip -n -c kieker.map > kieker.map.gz && echo notes | xz > notes.txt.xz"));
  ReadBack back = read_back(dir);
  EXPECT_TRUE(back.stats.ok);
  ASSERT_EQ(back.stats.warnings.size(), 1u);
  EXPECT_EQ(back.stats.warnings[0],
            dir + "/kieker.map.gz: compressed map files are not read; file skipped");
  EXPECT_EQ(back.records.size(), 13u);
}

TEST(KiekerCompression, ReadDecompressedStopsWhenAskedAndReportsWhatItRead) {
  TempDir tmp;
  const std::string path = tmp / "data.xz";
  ASSERT_TRUE(
      sh("xz -c " + shell_quoted(kBookstore + "/" + kBookstoreData) + " > " + shell_quoted(path)));
  uint64_t seen = 0;
  int calls = 0;
  DecompressReport r = read_decompressed(path, [&](std::string_view chunk) {
    seen += chunk.size();
    return ++calls < 2;
  });
  EXPECT_TRUE(r.stopped);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r.bytes, seen);
  EXPECT_LT(seen, fs::file_size(kBookstore + "/" + kBookstoreData));
  EXPECT_EQ(r.compression, Compression::kXz);
}

TEST(KiekerCompression, MagicBytesAndExtensions) {
  using namespace std::string_view_literals;
  EXPECT_EQ(compression_from_magic("\x1f\x8b\x08"sv), Compression::kGzip);
  EXPECT_EQ(compression_from_magic("\xfd"
                                   "7zXZ\0"sv),
            Compression::kXz);
  EXPECT_EQ(compression_from_magic("\xfd"
                                   "7zXZ"sv),
            Compression::kNone);
  EXPECT_EQ(compression_from_magic("BZh9"sv), Compression::kBzip2);
  EXPECT_EQ(compression_from_magic("BZhX"sv), Compression::kNone);
  EXPECT_EQ(compression_from_magic("PK\x03\x04"sv), Compression::kZip);
  EXPECT_EQ(compression_from_magic("PK\x05\x06"sv), Compression::kZip);
  EXPECT_EQ(compression_from_magic("\x78\x9c"sv), Compression::kZlib);  // Java's default
  EXPECT_EQ(compression_from_magic("\x78\x01"sv), Compression::kZlib);
  EXPECT_EQ(compression_from_magic("\x78\xda"sv), Compression::kZlib);
  EXPECT_EQ(compression_from_magic("\x78\x9d"sv), Compression::kNone);  // check bits wrong
  EXPECT_EQ(compression_from_magic("\x78\xbb"sv), Compression::kNone);  // preset dictionary
  EXPECT_EQ(compression_from_magic("$0;1283156545581511026"sv), Compression::kNone);
  EXPECT_EQ(compression_from_magic("\0\0\0\0\0\0"sv), Compression::kNone);  // .bin type id 0
  EXPECT_EQ(compression_from_extension("kieker-1-UTC-001.dat.gz"), Compression::kGzip);
  EXPECT_EQ(compression_from_extension("kieker-1-UTC-001.df"), Compression::kZlib);
  EXPECT_EQ(compression_from_extension("kieker-1-UTC-001.bin.xz"), Compression::kXz);
  EXPECT_EQ(compression_from_extension("kieker-1-UTC-001.bz2"), Compression::kBzip2);
  EXPECT_EQ(compression_from_extension("kieker-1-UTC-001.zip"), Compression::kZip);
  EXPECT_EQ(compression_from_extension("kieker-1-UTC-001.dat"), Compression::kNone);
}

}  // namespace
}  // namespace sonde::format::compression_test
