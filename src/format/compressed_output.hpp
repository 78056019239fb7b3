// Writing a compressed file as a stream: what KiekerLogWriter uses for
// compressed data files. Every format is one stream over the whole file, as
// Kieker's compression filters write them (anchor §2.5); zip holds one entry.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "format/compressed_format.hpp"

namespace sonde::format {

namespace compressed {
class Encoder;
}

class CompressedOutput {
 public:
  // A zip entry's size field is 32 bits and this writer writes no zip64
  // records, so callers start a new file before an entry reaches this size
  // (the margin covers deflate's worst-case growth).
  static constexpr uint64_t kMaxZipEntryBytes = (uint64_t{1} << 32) - (uint64_t{64} << 20);

  // Writes to `fd` (not owned). `entry_name` names the single zip entry and
  // is ignored by the other formats. kNone passes data through unchanged.
  CompressedOutput(int fd, Compression compression, std::string entry_name);
  ~CompressedOutput();
  CompressedOutput(const CompressedOutput&) = delete;
  CompressedOutput& operator=(const CompressedOutput&) = delete;

  // Compresses `data` and writes whatever the compressor emits.
  bool write(std::string_view data);
  // Writes `data`, then makes everything written so far decodable from the
  // file (a sync flush), so a reader of a file still being written, or of one
  // left by a crash, gets the data up to here. Not bzip2, which cannot: its
  // data decodes a block (900 kB) at a time and at finish().
  bool flush(std::string_view data = {});
  // Writes `data` and ends the stream (trailer, zip central directory). Does
  // not close the descriptor. Further calls fail.
  bool finish(std::string_view data = {});

  // Set after a failure: the library's message or the errno text of write(2).
  const std::string& error() const { return error_; }

 private:
  enum class Step { kRun, kFlush, kFinish };
  bool step(std::string_view data, Step how);

  int fd_;
  std::unique_ptr<compressed::Encoder> encoder_;  // null for kNone
  std::string out_;
  std::string error_;
  bool finished_ = false;
};

}  // namespace sonde::format
