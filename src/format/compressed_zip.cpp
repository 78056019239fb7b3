// Streaming zip reading (PKWARE APPNOTE 4.3): walks the local file headers
// from the start of the file instead of seeking to the central directory at
// its end, so a log cut short is still read up to the cut. (Not libarchive's
// streamable reader, which delivered nothing of a cut-short entry's last
// read when tried: docs/formats/kieker.md, "Why sonde's own zip code".) Kieker's writer
// (java.util.zip.ZipOutputStream) puts one deflated entry with a data
// descriptor into each file; `zip` stores sizes in the local header instead.
#include <zlib.h>

#include <algorithm>
#include <string>

#include "format/compressed_stream.hpp"
#include "format/compressed_zip_format.hpp"

namespace sonde::format::compressed {

namespace {

constexpr size_t kLocalHeaderSize = 30;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kZip64Marker = 0xffffffff;

uint64_t little_endian(std::string_view s, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = width; i-- > 0;) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

struct LocalEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0;
  uint64_t uncompressed = 0;
  bool zip64 = false;  // sizes in the data descriptor are 8 bytes wide
  bool has_descriptor() const { return (flags & zip::kFlagDataDescriptor) != 0; }
};

bool is_data_entry(std::string_view name) {
  return name.ends_with(".dat") || name.ends_with(".bin");
}

StreamEnd truncated() { return {StreamEnd::kTruncated, ""}; }

StreamEnd cut_or_failed(const InputFile& in) {
  if (!in.read_error().empty()) return {StreamEnd::kReadError, in.read_error()};
  return truncated();
}

// Parses the local header at the start of in.buffered() (its signature already checked).
bool read_local_header(InputFile& in, LocalEntry& e) {
  if (!in.want(kLocalHeaderSize)) return false;
  std::string_view h = in.buffered();
  e.flags = static_cast<uint16_t>(little_endian(h, 6, 2));
  e.method = static_cast<uint16_t>(little_endian(h, 8, 2));
  e.crc = static_cast<uint32_t>(little_endian(h, 14, 4));
  e.compressed = little_endian(h, 18, 4);
  e.uncompressed = little_endian(h, 22, 4);
  const size_t name_len = little_endian(h, 26, 2);
  const size_t extra_len = little_endian(h, 28, 2);
  if (!in.want(kLocalHeaderSize + name_len + extra_len)) return false;
  h = in.buffered();
  e.name = std::string(h.substr(kLocalHeaderSize, name_len));
  std::string_view extra = h.substr(kLocalHeaderSize + name_len, extra_len);
  while (extra.size() >= 4) {
    const size_t id = little_endian(extra, 0, 2);
    const size_t len = std::min<size_t>(little_endian(extra, 2, 2), extra.size() - 4);
    if (id == kZip64ExtraId) {
      e.zip64 = true;
      // In a local header the field holds both sizes, uncompressed first.
      if (len >= 16 && e.uncompressed == kZip64Marker) e.uncompressed = little_endian(extra, 4, 8);
      if (len >= 16 && e.compressed == kZip64Marker) e.compressed = little_endian(extra, 12, 8);
    }
    extra.remove_prefix(4 + len);
  }
  in.consume(kLocalHeaderSize + name_len + extra_len);
  return true;
}

// Copies `size` stored bytes to `out` (or drops them when `out` is null).
StreamEnd copy_stored(InputFile& in, Output* out, uint64_t size, uint32_t& crc) {
  while (size > 0) {
    if (!in.refill()) return cut_or_failed(in);
    std::string_view chunk = in.buffered().substr(0, size);
    crc = static_cast<uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(chunk.size())));
    in.consume(chunk.size());
    size -= chunk.size();
    if (out != nullptr && !out->emit(chunk)) return {StreamEnd::kStopped, ""};
  }
  return {};
}

// Reads the data descriptor after an entry into e.crc and e.uncompressed.
StreamEnd read_descriptor(InputFile& in, LocalEntry& e) {
  const size_t width = e.zip64 ? 8 : 4;
  if (!in.want(4)) return cut_or_failed(in);
  if (little_endian(in.buffered(), 0, 4) == zip::kDataDescriptor)
    in.consume(4);  // optional signature
  if (!in.want(4 + 2 * width)) return cut_or_failed(in);
  e.crc = static_cast<uint32_t>(little_endian(in.buffered(), 0, 4));
  e.compressed = little_endian(in.buffered(), 4, width);
  e.uncompressed = little_endian(in.buffered(), 4 + width, width);
  in.consume(4 + 2 * width);
  return {};
}

// Reads (out != null) or skips (out == null) the entry whose header was just read.
StreamEnd read_entry(InputFile& in, LocalEntry& e, Output* out) {
  const bool skipping = out == nullptr;
  if ((e.flags & zip::kFlagEncrypted) != 0 && (!skipping || e.has_descriptor())) {
    return {StreamEnd::kUnusable, "zip entry " + e.name + " is encrypted"};
  }
  if (skipping && !e.has_descriptor()) {
    uint32_t ignored = 0;
    return copy_stored(in, nullptr, e.compressed, ignored);
  }
  uint32_t crc = 0;
  StreamEnd end;
  if (e.method == zip::kMethodDeflate) {
    auto drop = [](std::string_view) { return true; };
    ChunkCallback drop_fn = drop;
    Output dropped(drop_fn);
    end = decode_raw_deflate(in, skipping ? dropped : *out, crc);
  } else if (e.method == zip::kMethodStored && !e.has_descriptor()) {
    end = copy_stored(in, out, e.compressed, crc);
  } else if (e.method == zip::kMethodStored) {
    return {StreamEnd::kUnusable, "zip entry " + e.name +
                                      " is stored with a data descriptor, so its end "
                                      "cannot be found without the central directory"};
  } else {
    return {StreamEnd::kUnusable, "zip entry " + e.name + " uses compression method " +
                                      std::to_string(e.method) +
                                      "; only stored (0) and deflate (8) are supported"};
  }
  if (end.kind != StreamEnd::kComplete) return end;
  if (e.has_descriptor()) {
    end = read_descriptor(in, e);
    if (end.kind != StreamEnd::kComplete || skipping) return end;
  }
  const uint64_t size_mask = e.zip64 ? ~uint64_t{0} : uint64_t{0xffffffff};
  if (crc != e.crc || (out->delivered() & size_mask) != e.uncompressed) {
    return {StreamEnd::kCorrupt,
            "zip entry " + e.name + " does not match its recorded CRC-32 or size"};
  }
  return {};
}

// Looks at what follows the entry read: more entries are reported, not read.
void note_what_follows(InputFile& in, const std::string& entry, ZipReport& report) {
  if (!in.want(4)) {
    report.notes.push_back("zip archive ends after entry " + entry +
                           " without a central directory (cut short?); the entry is complete");
    return;
  }
  const uint64_t offset = in.offset();
  const uint32_t sig = static_cast<uint32_t>(little_endian(in.buffered(), 0, 4));
  LocalEntry next;
  if (sig == zip::kLocalHeader && read_local_header(in, next)) {
    report.notes.push_back("zip archive holds more entries after " + entry +
                           " (next: " + next.name + "); only " + entry + " was read");
  } else if (sig != zip::kCentralHeader && sig != zip::kEndOfCentralDirectory &&
             sig != zip::kZip64EndOfCentralDirectory) {
    report.notes.push_back("unexpected bytes after zip entry " + entry + " at offset " +
                           std::to_string(offset) + " ignored");
  }
}

}  // namespace

StreamEnd decode_zip(InputFile& in, Output& out, ZipReport& report) {
  std::vector<std::string> skipped;
  for (;;) {
    if (!in.want(4)) return cut_or_failed(in);
    const uint32_t sig = static_cast<uint32_t>(little_endian(in.buffered(), 0, 4));
    if (sig == zip::kCentralHeader || sig == zip::kEndOfCentralDirectory) {
      if (skipped.empty()) return {StreamEnd::kUnusable, "zip archive holds no entry"};
      std::string names;
      for (const std::string& n : skipped) names += (names.empty() ? "" : ", ") + n;
      return {StreamEnd::kUnusable,
              "zip archive holds no entry named *.dat or *.bin (entries: " + names + ")"};
    }
    if (sig != zip::kLocalHeader) {
      return {StreamEnd::kCorrupt, "no zip entry header at offset " + std::to_string(in.offset())};
    }
    LocalEntry e;
    if (!read_local_header(in, e)) return cut_or_failed(in);
    const bool wanted = is_data_entry(e.name);
    StreamEnd end = read_entry(in, e, wanted ? &out : nullptr);
    if (end.kind != StreamEnd::kComplete) return end;
    if (!wanted) {
      skipped.push_back(e.name);
      continue;
    }
    report.entry = e.name;
    for (const std::string& n : skipped) {
      report.notes.push_back("zip entry " + n + " ignored (not named *.dat or *.bin)");
    }
    note_what_follows(in, e.name, report);
    return {};
  }
}

}  // namespace sonde::format::compressed
