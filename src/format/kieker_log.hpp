// Kieker filesystem logs (anchor §2): a directory holding kieker.map and
// numbered data files kieker-<yyyyMMdd-HHmmssSSS>-UTC-<NNN>.dat or .bin, all
// sharing the one string registry of the directory, each optionally
// compressed as a whole (.dat.gz, ...; docs/formats/kieker.md). The reader,
// read_kieker_directory(), is declared in format/log_reader.hpp and reads
// every compression Kieker writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "format/compressed_format.hpp"
#include "format/compressed_output.hpp"
#include "format/kieker_map.hpp"
#include "format/record.hpp"

namespace sonde::format {

enum class KiekerLogMode {
  kDat,  // text; the map holds only class names; see kieker_dat.hpp for string limits
  kBin,  // binary; the map holds every string; lossless
};

// Writes one log directory through POSIX file descriptors. Every failure
// (unwritable directory, disk full, ...) is remembered as a message naming
// the file; after an I/O failure all calls return false. Not thread-safe.
class KiekerLogWriter {
 public:
  static constexpr uint64_t kDefaultMaxEntriesPerFile = 25000;  // Kieker's maxEntriesInFile

  struct Options {
    KiekerLogMode mode = KiekerLogMode::kDat;
    uint64_t max_entries_per_file = kDefaultMaxEntriesPerFile;
    // Compresses each data file as one stream, named with a compound
    // extension (.dat.gz, .bin.xz, ...) that Kieker's current reader
    // resolves. kBzip2 files are named .bz2, not .gz as Kieker's own BZip2
    // filter names them, because Kieker's reader would gunzip a .gz. zip
    // files hold one entry named like the uncompressed file; a new file is
    // started before an entry reaches 4 GiB (no zip64). The map is never
    // compressed (Kieker's reader expects it plain).
    Compression compression = Compression::kNone;
  };

  // Creates `directory` (and missing parents) and its kieker.map, which
  // must not exist yet: appending to another log would mix two registries.
  KiekerLogWriter(std::string directory, const Options& options);
  KiekerLogWriter(std::string directory, KiekerLogMode mode,
                  uint64_t max_entries_per_file = kDefaultMaxEntriesPerFile);
  ~KiekerLogWriter();
  KiekerLogWriter(const KiekerLogWriter&) = delete;
  KiekerLogWriter& operator=(const KiekerLogWriter&) = delete;

  // Buffers one record, starting the next data file every
  // max_entries_per_file records (at least 1). A record whose values do not match its
  // schema is rejected (false, error() says why) without failing the writer.
  bool write(const Record& r);
  // Hands buffered bytes to the kernel, map entries before the records that
  // use them. A compressed data file is flushed so that it decodes up to
  // here (bzip2 excepted: see CompressedOutput::flush).
  bool flush();
  // Flushes and closes the files. Further writes fail. Called by the destructor.
  bool close();

  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  const std::string& directory() const { return dir_; }
  KiekerLogMode mode() const { return mode_; }
  Compression compression() const { return compression_; }
  uint64_t records_written() const { return records_; }
  // .dat only: string values that contained `;`, CR, LF or a trailing `\`
  // and were altered (kieker::kDatSubstitute).
  uint64_t strings_altered() const { return altered_; }
  uint32_t data_files() const { return file_counter_; }

 private:
  bool fail(std::string message);
  bool start_data_file();
  bool close_data_file();
  bool drain(int fd, const std::string& path, std::string& buffer);
  // Hands data_buf_ on, through the compressor if there is one.
  bool drain_data(bool sync);
  bool drain_all(bool sync);

  std::string dir_;
  KiekerLogMode mode_;
  uint64_t max_entries_;
  Compression compression_;
  kieker::WriterRegistry registry_;
  int map_fd_ = -1;
  std::string map_path_;
  std::string map_buf_;
  int data_fd_ = -1;
  std::string data_path_;
  std::string data_buf_;
  std::unique_ptr<CompressedOutput> compressor_;  // null when not compressing
  uint64_t entries_in_file_ = 0;
  uint64_t bytes_in_file_ = 0;  // uncompressed
  uint32_t file_counter_ = 0;
  uint64_t records_ = 0;
  uint64_t altered_ = 0;
  std::string error_;
  bool failed_ = false;
  bool closed_ = false;
};

}  // namespace sonde::format
