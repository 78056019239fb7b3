// Where encoded bytes go: a file descriptor, a growing string (tests), or a
// socket. Failures are remembered with a message naming the target, never thrown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sonde::format {

// What one native log chunk carried, for sinks that keep chunks apart (the
// monitor's native TCP writer keeps them until the receiver confirms them).
struct ChunkMark {
  uint64_t probe_events = 0;      // enter/exit events in the chunk
  uint64_t dictionary_bytes = 0;  // NativeWriter::dictionary() size after the chunk
  uint32_t dictionary_items = 0;
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Writes all bytes or returns false and sets error().
  virtual bool write(const void* data, size_t size) = 0;
  // Makes written data durable where that means something (fdatasync for files).
  virtual bool sync() { return true; }
  // A native writer wrote a whole chunk (its header and body) since the
  // previous mark.
  virtual void end_chunk(const ChunkMark& /*mark*/) {}
  const std::string& error() const { return error_; }

 protected:
  std::string error_;
};

// Writes to a file it opens (O_CREAT|O_TRUNC|O_CLOEXEC) and closes.
class FileSink final : public ByteSink {
 public:
  explicit FileSink(std::string path);
  ~FileSink() override;
  bool ok() const { return fd_ >= 0; }
  bool write(const void* data, size_t size) override;
  bool sync() override;
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return bytes_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
};

class StringSink final : public ByteSink {
 public:
  bool write(const void* data, size_t size) override {
    bytes.append(static_cast<const char*>(data), size);
    return true;
  }
  std::string bytes;
};

// Writes `size` bytes to `fd`, retrying on EINTR and partial writes.
// Returns 0 or the errno of the failure.
int write_all(int fd, const void* data, size_t size);

}  // namespace sonde::format
