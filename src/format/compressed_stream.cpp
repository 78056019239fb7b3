#include "format/compressed_stream.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sonde::format::compressed {

bool InputFile::want(size_t n) {
  while (buffered().size() < n && !eof_) {
    // Drop consumed bytes first so the buffer stays about one block large.
    buf_.erase(0, pos_);
    pos_ = 0;
    const size_t have = buf_.size();
    buf_.resize(have + kBlock);
    ssize_t got;
    do {
      got = ::read(fd_, buf_.data() + have, kBlock);
    } while (got < 0 && errno == EINTR);
    if (got < 0) read_error_ = std::strerror(errno);
    buf_.resize(have + (got > 0 ? static_cast<size_t>(got) : 0));
    if (got <= 0) eof_ = true;
  }
  return buffered().size() >= n;
}

}  // namespace sonde::format::compressed
