// KiekerLogWriter with compressed data files: the files must be what the
// real tools accept (gzip -t, xz -t, bzip2 -t, unzip -t), decompress to
// exactly the uncompressed writer's bytes, and read back to every record.
#include <sys/resource.h>
#include <zlib.h>

#include <cctype>
#include <csignal>
#include <cstdio>

#include "kieker_compression_support.hpp"

namespace sonde::format::compression_test {
namespace {

struct Codec {
  Compression compression;
  const char* ext;
  const char* test_command;        // checks a file's integrity; "" when no tool exists
  const char* decompress_command;  // writes a file's content to stdout
};

const Codec kCodecs[] = {
    {Compression::kGzip, "gz", "gzip -t", "gzip -dc"},
    {Compression::kXz, "xz", "xz -t", "xz -dc"},
    {Compression::kBzip2, "bz2", "bzip2 -t", "bzip2 -dc"},
    {Compression::kZip, "zip", "unzip -tqq", "unzip -p"},
    // No Debian command-line tool reads bare zlib streams; zlib itself does.
    {Compression::kZlib, "df", "", ""},
};

std::string inflate_zlib(const std::string& compressed) {
  z_stream zs{};
  EXPECT_EQ(inflateInit(&zs), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  int ret = Z_OK;
  while (ret == Z_OK) {
    char buf[65536];
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    ret = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(ret, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

// The content of one written data file, decompressed by the real tool.
std::string decompressed(const Codec& codec, const std::string& path) {
  if (codec.compression == Compression::kZlib) return inflate_zlib(slurp(path));
  TempDir tmp;
  const std::string out = tmp / "out";
  EXPECT_TRUE(sh(std::string(codec.decompress_command) + " " + shell_quoted(path) + " > " +
                 shell_quoted(out)))
      << path;
  return slurp(out);
}

// Copies `log` into a new writer; returns the names of its data files.
std::vector<std::string> write_copy(const std::string& log, const std::string& out,
                                    const KiekerLogWriter::Options& options) {
  KiekerLogWriter w(out, options);
  Copy copy(w);
  LogReadStats stats = read_kieker_directory(log, copy);
  EXPECT_TRUE(stats.ok);
  EXPECT_TRUE(w.close()) << w.error();
  return data_files(out);
}

// kieker-<yyyyMMdd>-<HHmmssSSS>-UTC-<NNN>.<extension> (std::regex trips
// GCC 12's -Wmaybe-uninitialized under the sanitizers).
bool is_data_file_name(const std::string& name, size_t counter, const std::string& extension) {
  auto digits = [&](size_t at, size_t n) {
    if (at + n > name.size()) return false;
    for (size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    }
    return true;
  };
  char tail[32];
  std::snprintf(tail, sizeof tail, "-UTC-%03zu.", counter);
  return name.rfind("kieker-", 0) == 0 && digits(7, 8) && name[15] == '-' && digits(16, 9) &&
         name.substr(25) == tail + extension;
}

const char* mode_name(KiekerLogMode mode) { return mode == KiekerLogMode::kDat ? "dat" : "bin"; }

TEST(KiekerCompressedWriter, FilesPassTheRealToolsAndReadBackEveryRecord) {
  for (const std::string& log : kieker_logs()) {
    const std::vector<std::string> original = read_back(log).records;
    for (KiekerLogMode mode : {KiekerLogMode::kDat, KiekerLogMode::kBin}) {
      TempDir tmp;
      const uint64_t per_file = original.size() / 3 + 1;  // three files each
      const std::vector<std::string> plain =
          write_copy(log, tmp / "plain", {mode, per_file, Compression::kNone});
      ASSERT_EQ(plain.size(), 3u);
      for (const Codec& codec : kCodecs) {
        const std::string what = log + " " + mode_name(mode) + " " + codec.ext;
        const std::string dir = tmp / codec.ext;
        const std::vector<std::string> names =
            write_copy(log, dir, {mode, per_file, codec.compression});
        ASSERT_EQ(names.size(), 3u) << what;
        for (size_t i = 0; i < names.size(); ++i) {
          const std::string path = dir + "/" + names[i];
          // Compound names, which Kieker's DirectoryReaderStage resolves.
          EXPECT_TRUE(
              is_data_file_name(names[i], i + 1, std::string(mode_name(mode)) + "." + codec.ext))
              << names[i];
          if (*codec.test_command != '\0') {
            EXPECT_TRUE(sh(std::string(codec.test_command) + " " + shell_quoted(path))) << path;
          }
          // Same bytes as the uncompressed writer's file (names differ only in the time stamp).
          EXPECT_EQ(decompressed(codec, path), slurp(tmp / "plain/" + plain[i])) << path;
        }
        EXPECT_EQ(slurp(dir + "/kieker.map"), slurp(tmp / "plain/kieker.map")) << what;
        ReadBack back = read_back(dir);
        EXPECT_TRUE(back.stats.ok) << what << ": " << first(back.stats.errors);
        EXPECT_TRUE(back.stats.warnings.empty()) << what << ": " << first(back.stats.warnings);
        EXPECT_EQ(back.stats.files.size(), 3u) << what;
        EXPECT_TRUE(back.records == original) << what;
      }
    }
  }
}

TEST(KiekerCompressedWriter, ZipEntryIsNamedLikeTheUncompressedFile) {
  TempDir tmp;
  const std::vector<std::string> names = write_copy(testdata("kieker/events-2014/log"), tmp / "log",
                                                    {KiekerLogMode::kBin, 1000, Compression::kZip});
  ASSERT_EQ(names.size(), 1u);
  const std::string list = tmp / "entries";
  ASSERT_TRUE(sh("zipinfo -1 " + shell_quoted(tmp / ("log/" + names[0])) + " > " + list));
  EXPECT_EQ(slurp(list), names[0].substr(0, names[0].size() - 4) + "\n");
}

TEST(KiekerCompressedWriter, FlushMakesAnOpenFileReadableUpToThere) {
  const std::string log = testdata("kieker/events-2017-singleton/log");
  const std::vector<std::string> original = read_back(log).records;
  for (const Codec& codec : kCodecs) {
    TempDir tmp;
    const std::string dir = tmp / "log";
    KiekerLogWriter w(dir, {KiekerLogMode::kDat, 1000, codec.compression});
    class Half : public RecordSink {
     public:
      explicit Half(KiekerLogWriter& w) : w_(w) {}
      bool on_record(const Record& r) override { return ++n_ > 50 || w_.write(r); }

     private:
      KiekerLogWriter& w_;
      int n_ = 0;
    } half(w);
    read_kieker_directory(log, half);
    ASSERT_TRUE(w.flush()) << w.error();
    // The writer is still open: the stream has no end yet, but its data so far decodes.
    ReadBack open = read_back(dir);
    EXPECT_TRUE(open.stats.ok) << codec.ext << ": " << first(open.stats.errors);
    // bzip2 cannot flush: a block decodes only once complete (900 kB) or at close.
    const size_t readable = codec.compression == Compression::kBzip2 ? 0 : 50;
    ASSERT_EQ(open.records.size(), readable) << codec.ext;
    EXPECT_TRUE(std::equal(open.records.begin(), open.records.end(), original.begin()));
    ASSERT_EQ(open.stats.warnings.size(), 1u) << codec.ext;
    EXPECT_NE(open.stats.warnings[0].find("stream is truncated"), std::string::npos)
        << open.stats.warnings[0];
    ASSERT_TRUE(w.close()) << w.error();
    ReadBack closed = read_back(dir);
    EXPECT_TRUE(closed.stats.warnings.empty()) << codec.ext << ": " << first(closed.stats.warnings);
    EXPECT_EQ(closed.records.size(), 50u);
  }
}

Record before_event(int64_t i) {
  Record r;
  reset_to_defaults(r, find_builtin_schema(kieker_class::kBeforeOperation));
  r.logging_timestamp = i;
  // Values that do not compress away, so the file really grows.
  static thread_local std::string op;
  op = "op" + std::to_string(i * 2654435761u % 1000003) + "x" + std::to_string(i * 40503 % 65521);
  r.values = {int64_t{i * 7919}, int64_t{i}, int64_t{i % 13}, std::string_view(op),
              std::string_view("cls")};
  return r;
}

TEST(KiekerCompressedWriter, FullDiskGivesAClearErrorNotACrash) {
  for (const Codec& codec : kCodecs) {
    TempDir tmp;
    rlimit old{};
    getrlimit(RLIMIT_FSIZE, &old);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of a signal
    rlimit small = old;
    small.rlim_cur = 20000;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    KiekerLogWriter w(tmp / "log", {KiekerLogMode::kDat, 1000000, codec.compression});
    bool ok = true;
    for (int64_t i = 0; i < 20000 && ok; ++i) ok = w.write(before_event(i));
    ok = ok && w.close();
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_FALSE(ok) << codec.ext;
    EXPECT_TRUE(w.failed());
    EXPECT_NE(w.error().find("cannot write " + tmp / "log/kieker-"), std::string::npos)
        << w.error();
    EXPECT_NE(w.error().find("File too large"), std::string::npos) << w.error();
  }
}

}  // namespace
}  // namespace sonde::format::compression_test
