// Reading a possibly compressed file as a stream of decompressed chunks.
// The content decides the format (its magic bytes, see compressed_format.hpp);
// the file name's extension is only a fallback for files too short to
// carry a signature, and a disagreement between the two is reported.
// Never holds more than a few blocks of the file in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "format/compressed_format.hpp"

namespace sonde::format {

struct DecompressReport {
  Compression compression = Compression::kNone;  // how the content was read
  // Set when the file could not be read to its end: unopenable, unreadable,
  // corrupt compressed data, a zip without a .dat/.bin entry, a compression
  // extension on data that has no known signature. Names the file.
  std::string error;
  // Each names the file: a stream cut short (its data up to the cut was
  // delivered), bytes after the end of the stream, an extension that does not
  // match the content, zip entries not read.
  std::vector<std::string> warnings;
  bool truncated = false;  // the stream was cut short (a warning says so)
  bool stopped = false;    // the callback returned false
  uint64_t bytes = 0;      // decompressed bytes delivered
  std::string zip_entry;   // for zip archives: the entry read
};

// Called with each decompressed chunk (never empty) in order; returning false stops reading.
using DecompressedChunkFn = std::function<bool(std::string_view)>;

// Streams the decompressed content of `path` to `fn`. Uncompressed files are
// passed through. For zip archives the first entry named *.dat or *.bin is
// read (Kieker names its single entry <file>.dat); other entries are reported
// as warnings. Never throws on bad input.
DecompressReport read_decompressed(const std::string& path, const DecompressedChunkFn& fn);

}  // namespace sonde::format
