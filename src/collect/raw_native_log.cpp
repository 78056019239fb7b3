#include "collect/raw_native_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sonde::collect {

RawNativeLog::~RawNativeLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawNativeLog::fail(const std::string& what, int error_number) {
  if (error_.empty()) error_ = what + " " + path_ + ": " + std::strerror(error_number);
  return false;
}

bool RawNativeLog::header(std::string_view bytes) {
  if (!error_.empty()) return false;
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return fail("cannot create", errno);
  }
  buffer_.append(bytes);
  return true;
}

bool RawNativeLog::append(std::string_view chunk) {
  if (!error_.empty()) return false;
  if (fd_ < 0) {
    error_ = "cannot write " + path_ + ": a chunk arrived before the stream's header";
    return false;
  }
  buffer_.append(chunk);
  return true;
}

bool RawNativeLog::flush() {
  if (!error_.empty()) return false;
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // What was written stays a readable log up to its last whole chunk
      // (the reader reports the cut one as truncated).
      buffer_.erase(0, done);
      written_ += done;
      return fail("cannot write", errno);
    }
    done += static_cast<size_t>(n);
  }
  written_ += done;
  buffer_.clear();
  return true;
}

std::string RawNativeLog::finish() {
  if (fd_ >= 0) {
    flush();
    if (::close(fd_) != 0 && error_.empty()) fail("cannot close", errno);
    fd_ = -1;
  }
  return error_;
}

}  // namespace sonde::collect
