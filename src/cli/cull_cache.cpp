#include "cli/cull_cache.hpp"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <system_error>

namespace sonde::cli {

namespace {

// As the other command files: inside the anonymous namespace, where the
// unity build's batches may repeat it.
namespace fs = std::filesystem;

std::string gnu_build_id(const fs::path& exe) {
  const int fd = ::open(exe.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string hex;
  elf_version(EV_CURRENT);
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    const void* bits = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    for (ssize_t i = 0; i < n && bits != nullptr; ++i) {
      char byte[3];
      std::snprintf(byte, sizeof byte, "%02x", static_cast<const unsigned char*>(bits)[i]);
      hex += byte;
    }
    elf_end(elf);
  }
  ::close(fd);
  return hex;
}

}  // namespace

std::optional<fs::path> resolve_executable(const std::string& program) {
  if (program.empty()) return std::nullopt;
  std::error_code ec;
  if (program.find('/') != std::string::npos) {
    fs::path p = fs::canonical(program, ec);
    return ec ? std::nullopt : std::optional<fs::path>(p);
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', begin), dirs.size());
    const std::string dir = dirs.substr(begin, end - begin);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec)) {
      fs::path p = fs::canonical(candidate, ec);
      if (!ec) return p;
    }
    begin = end + 1;
  }
  return std::nullopt;
}

std::string executable_key(const fs::path& exe) {
  if (std::string id = gnu_build_id(exe); !id.empty()) return "build-id-" + id;
  // No build id (stripped of its notes, or not ELF): the file as it is now.
  std::error_code ec;
  const auto size = fs::file_size(exe, ec);
  if (ec) return "";
  const auto mtime = fs::last_write_time(exe, ec);
  if (ec) return "";
  const std::string identity = fs::absolute(exe, ec).string() + '\n' + std::to_string(size) + '\n' +
                               std::to_string(mtime.time_since_epoch().count());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(identity));
  return std::string("file-") + hex;
}

fs::path cull_cache_dir() {
  if (const char* dir = std::getenv("SONDE_CULL_CACHE"); dir != nullptr && dir[0] != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return fs::path(xdg) / "sonde" / "cull";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return fs::path(home) / ".cache" / "sonde" / "cull";
  }
  return {};
}

std::vector<std::string> excluded_patterns(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > 1 && line[0] == '-') out.push_back(line);
  }
  return out;
}

std::string write_cull_cache(const fs::path& file, const std::vector<std::string>& exclusions,
                             const std::string& program) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return "cannot create " + file.parent_path().string() + ": " + ec.message();
  // Beside the file, then renamed over it: a reader (a run starting now)
  // sees the old list or the new one, never half of one.
  const fs::path temporary = file.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << "# sonde run --cull: the functions culled in earlier runs of " << program
        << "\n# (this build). A patterns file: the next --cull run of this build starts\n"
        << "# with them excluded. Delete it, or run with --no-cull-cache, to start afresh.\n";
    for (const std::string& line : exclusions) out << line << "\n";
    out.flush();
    if (!out) {
      fs::remove(temporary, ec);
      return "cannot write " + temporary.string();
    }
  }
  fs::rename(temporary, file, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(temporary, ec);
    return "cannot write " + file.string() + ": " + why;
  }
  return "";
}

}  // namespace sonde::cli
