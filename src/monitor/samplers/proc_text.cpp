#include "monitor/samplers/proc_text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <system_error>

namespace sonde::monitor::samplers {
namespace {

// /proc/stat on machines with thousands of CPUs and interrupts runs to a few
// MiB; anything far beyond that is not a /proc file we understand.
constexpr size_t kMaxFileBytes = 64u << 20;

std::string describe(const std::string& path, int err) {
  return path + ": " + std::error_code(err, std::generic_category()).message();
}

}  // namespace

bool read_text_file(const std::string& path, std::string* out, std::string* error) {
  out->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = describe(path, errno);
    return false;
  }
  char chunk[16384];
  bool ok = true;
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = describe(path, errno);
      ok = false;
      break;
    }
    if (n == 0) break;
    out->append(chunk, static_cast<size_t>(n));
    if (out->size() > kMaxFileBytes) {
      *error = path + ": larger than " + std::to_string(kMaxFileBytes) + " bytes";
      ok = false;
      break;
    }
  }
  ::close(fd);
  return ok;
}

void split_fields(std::string_view line, std::vector<std::string_view>& tokens) {
  tokens.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool parse_u64(std::string_view token, uint64_t* out) {
  if (token.empty()) return false;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && end == token.data() + token.size();
}

bool parse_i64(std::string_view token, int64_t* out) {
  if (token.empty()) return false;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && end == token.data() + token.size();
}

}  // namespace sonde::monitor::samplers
