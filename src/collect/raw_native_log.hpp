// A native client's log as the sender encoded it: its 16-byte file header
// and its chunks byte for byte, appended only after the stream reader has
// checked and decoded each one (magic, size, CRC, decompression, every
// item). Nothing is re-encoded or recompressed, so storing costs a copy
// into the write buffer and a write per 128 KiB or so; the old path
// re-encoded every record and took about a tenth of the collector's time
// (docs/collect.md, "Where the collector's time goes").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sonde::collect {

class RawNativeLog {
 public:
  // The file is created by header(), not here.
  explicit RawNativeLog(std::string path) : path_(std::move(path)) {}
  ~RawNativeLog();
  RawNativeLog(const RawNativeLog&) = delete;
  RawNativeLog& operator=(const RawNativeLog&) = delete;

  // Each returns false once writing failed; error() then names the file
  // and the reason (disk full, directory gone, ...).
  bool header(std::string_view bytes);  // creates (truncates) the file
  bool append(std::string_view chunk);  // buffered
  bool flush();                         // hands the buffer to the kernel
  std::string finish();                 // flush and close: "" or the error

  size_t buffered_bytes() const { return buffer_.size(); }
  uint64_t bytes_written() const { return written_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& what, int error_number);

  std::string path_;
  int fd_ = -1;
  std::string buffer_;
  uint64_t written_ = 0;
  std::string error_;
};

}  // namespace sonde::collect
