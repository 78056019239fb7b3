#include "format/byte_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sonde::format {

int write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

FileSink::FileSink(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) error_ = "cannot create " + path_ + ": " + std::strerror(errno);
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileSink::write(const void* data, size_t size) {
  if (fd_ < 0) return false;
  if (int err = write_all(fd_, data, size); err != 0) {
    error_ = "cannot write " + path_ + ": " + std::strerror(err);
    return false;
  }
  bytes_ += size;
  return true;
}

bool FileSink::sync() {
  if (fd_ < 0) return false;
  if (::fdatasync(fd_) != 0 && errno != EINVAL) {
    error_ = "cannot sync " + path_ + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace sonde::format
