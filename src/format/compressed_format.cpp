#include "format/compressed_format.hpp"

#include <utility>

namespace sonde::format {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// RFC 1950 §2.2: method 8 (deflate) with a window of at most 32 KiB, a check
// value making the 16-bit header a multiple of 31, and no preset dictionary
// (which a reader without that dictionary could not use anyway).
bool is_zlib_header(std::string_view head) {
  if (head.size() < 2) return false;
  const auto cmf = static_cast<unsigned char>(head[0]);
  const auto flg = static_cast<unsigned char>(head[1]);
  return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && (cmf * 256 + flg) % 31 == 0 && (flg & 0x20) == 0;
}

}  // namespace

bool parse_compression(std::string_view text, Compression* out) {
  static constexpr std::pair<std::string_view, Compression> kNames[] = {
      {"none", Compression::kNone}, {"gzip", Compression::kGzip},   {"zlib", Compression::kZlib},
      {"xz", Compression::kXz},     {"bzip2", Compression::kBzip2}, {"zip", Compression::kZip}};
  for (const auto& [name, c] : kNames) {
    if (text == name) {
      *out = c;
      return true;
    }
  }
  return false;
}

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "uncompressed";
    case Compression::kGzip:
      return "gzip";
    case Compression::kZlib:
      return "zlib (deflate)";
    case Compression::kXz:
      return "xz";
    case Compression::kBzip2:
      return "bzip2";
    case Compression::kZip:
      return "zip";
  }
  return "?";
}

std::string_view compression_extension(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "";
    case Compression::kGzip:
      return ".gz";
    case Compression::kZlib:
      return ".df";
    case Compression::kXz:
      return ".xz";
    case Compression::kBzip2:
      return ".bz2";
    case Compression::kZip:
      return ".zip";
  }
  return "";
}

Compression compression_from_extension(std::string_view file_name) {
  for (Compression c : {Compression::kGzip, Compression::kZlib, Compression::kXz,
                        Compression::kBzip2, Compression::kZip}) {
    if (file_name.ends_with(compression_extension(c))) return c;
  }
  return Compression::kNone;
}

Compression compression_from_magic(std::string_view head) {
  using namespace std::string_view_literals;
  if (starts_with(head, "\x1f\x8b"sv)) return Compression::kGzip;
  if (starts_with(head,
                  "\xfd"
                  "7zXZ\0"sv))
    return Compression::kXz;
  if (starts_with(head, "BZh"sv) && head.size() >= 4 && head[3] >= '1' && head[3] <= '9') {
    return Compression::kBzip2;
  }
  // A local file header, or the end record that is all an empty archive holds.
  if (starts_with(head, "PK\x03\x04"sv) || starts_with(head, "PK\x05\x06"sv)) {
    return Compression::kZip;
  }
  if (is_zlib_header(head)) return Compression::kZlib;
  return Compression::kNone;
}

}  // namespace sonde::format
