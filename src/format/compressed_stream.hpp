// Internal to the decompression layer (compressed_input.cpp and the
// compressed_<format>.cpp decoders): buffered input from one file, chunked
// output to the caller, and how a decoder says why it stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::format::compressed {

// The output buffer of the gzip/zlib, xz and bzip2 decoders: what one
// decoder call may produce before it hands the bytes on.
inline constexpr size_t kOutputBlock = 256 * 1024;

// Reads a file descriptor in large blocks; decoders look at what is buffered
// and consume what they used, so a container parser (zip) can hand the rest
// of a block to the next step.
class InputFile {
 public:
  static constexpr size_t kBlock = 256 * 1024;

  explicit InputFile(int fd) : fd_(fd) {}
  // Reads until `n` bytes are buffered or the file ends; true if they are.
  bool want(size_t n);
  // Reads one more block if everything buffered was consumed; false at the
  // end of the file or on a read error.
  bool refill() { return buffered().empty() ? want(1) : true; }
  std::string_view buffered() const { return std::string_view(buf_).substr(pos_); }
  void consume(size_t n) {
    pos_ += n;
    offset_ += n;
  }
  bool at_end() const { return eof_; }
  // Compressed bytes consumed so far: the file offset of buffered().
  uint64_t offset() const { return offset_; }
  // Set after a failed read(2).
  const std::string& read_error() const { return read_error_; }

 private:
  int fd_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t offset_ = 0;
  bool eof_ = false;
  std::string read_error_;
};

using ChunkCallback = std::function<bool(std::string_view)>;

// Hands decompressed bytes to the caller, never an empty chunk, counting
// them; remembers when the caller asked to stop.
class Output {
 public:
  explicit Output(const ChunkCallback& fn) : fn_(fn) {}
  bool emit(std::string_view bytes) {
    if (bytes.empty() || stopped_) return !stopped_;
    delivered_ += bytes.size();
    if (!fn_(bytes)) stopped_ = true;
    return !stopped_;
  }
  bool stopped() const { return stopped_; }
  uint64_t delivered() const { return delivered_; }

 private:
  const ChunkCallback& fn_;
  uint64_t delivered_ = 0;
  bool stopped_ = false;
};

// Why a decoder returned.
struct StreamEnd {
  enum Kind {
    kComplete,   // the stream ended where the format says it ends
    kTruncated,  // the file ended first; everything decoded before the cut was delivered
    kCorrupt,    // the library rejected the data; `detail` holds its message
    kStopped,    // the caller's callback returned false
    kReadError,  // read(2) failed; InputFile::read_error() says why
    kUnusable,   // readable but not usable (a zip without a data entry, ...); `detail` says why
  };
  Kind kind = kComplete;
  std::string detail;
  // kComplete only: bytes after the end of the stream, at this file offset, were ignored.
  bool trailing_data = false;
  uint64_t trailing_offset = 0;
};

// Decodes one stream from `in` to `out`. Multi-member gzip and concatenated
// xz or bzip2 streams (as `cat a.gz b.gz` or parallel compressors produce)
// are read to the last member.
StreamEnd decode_gzip(InputFile& in, Output& out);
StreamEnd decode_zlib(InputFile& in, Output& out);
StreamEnd decode_xz(InputFile& in, Output& out);
StreamEnd decode_bzip2(InputFile& in, Output& out);
// Raw deflate (a zip entry): stops at the end of the deflate stream and leaves
// the bytes after it buffered in `in`. `crc` receives the CRC-32 of the output.
StreamEnd decode_raw_deflate(InputFile& in, Output& out, uint32_t& crc);

struct ZipReport {
  std::string entry;               // name of the entry read
  std::vector<std::string> notes;  // entries ignored, a missing central directory, ...
};

// Reads the first entry named *.dat or *.bin of a zip archive, streaming
// through its local headers (so a truncated archive is read up to the cut).
StreamEnd decode_zip(InputFile& in, Output& out, ZipReport& report);

}  // namespace sonde::format::compressed
