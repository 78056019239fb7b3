// The whole-file compressions Kieker's filesystem writers use (anchor §2.5),
// how to recognise them by their first bytes and by their file extension.
#pragma once

#include <cstddef>
#include <string_view>

namespace sonde::format {

enum class Compression {
  kNone,
  kGzip,   // RFC 1952; Kieker's GZip filter, extension .gz
  kZlib,   // RFC 1950 (zlib-wrapped deflate, java.util.zip.DeflaterOutputStream), .df
  kXz,     // .xz
  kBzip2,  // .bz2, but Kieker's BZip2 filter names its files .gz
  kZip,    // an archive with the data file as its (only) entry, .zip
};

// Parses a setting: "none", "gzip", "zlib", "xz", "bzip2" or "zip".
bool parse_compression(std::string_view text, Compression* out);

// "gzip", "zlib (deflate)", ...; "uncompressed" for kNone.
std::string_view compression_name(Compression c);

// The extension a writer appends for `c` (".gz", ".df", ".xz", ".bz2", ".zip"; "" for kNone).
std::string_view compression_extension(Compression c);

// The compression a file name's last extension announces; kNone when it
// announces none. A .gz name may hold bzip2 data (see kBzip2).
Compression compression_from_extension(std::string_view file_name);

// Bytes compression_from_magic() needs to recognise every format.
inline constexpr size_t kCompressionMagicBytes = 6;

// The compression whose signature starts `head` (the first bytes of a file),
// or kNone. zlib has no fixed signature; its two header bytes are accepted
// when they form a valid header for deflate (which '$' of .dat text and the
// leading zero of a .bin type id never do).
Compression compression_from_magic(std::string_view head);

}  // namespace sonde::format
