#include "format/compressed_input.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "format/compressed_stream.hpp"

namespace sonde::format {

namespace {

using compressed::StreamEnd;

// The fixed leading bytes of each format (zlib: the method nibble only).
std::string_view signature(Compression c) {
  using namespace std::string_view_literals;
  switch (c) {
    case Compression::kGzip:
      return "\x1f\x8b"sv;
    case Compression::kZlib:
      return "\x78"sv;
    case Compression::kXz:
      return "\xfd"
             "7zXZ\0"sv;
    case Compression::kBzip2:
      return "BZh"sv;
    case Compression::kZip:
      return "PK"sv;
    case Compression::kNone:
      break;
  }
  return {};
}

// A file shorter than a signature cannot be recognised; if what it holds
// could start one, the extension is trusted and the decoder reports the cut.
bool could_be_cut_signature(std::string_view head, Compression by_name) {
  if (head.size() >= kCompressionMagicBytes) return false;
  std::string_view sig = signature(by_name);
  const size_t n = std::min(head.size(), sig.size());
  return by_name == Compression::kZlib ? head.size() < 2 && (head.empty() || (head[0] & 0x0f) == 8)
                                       : head.substr(0, n) == sig.substr(0, n);
}

StreamEnd pass_through(compressed::InputFile& in, compressed::Output& out) {
  while (in.refill()) {
    const std::string_view chunk = in.buffered();
    in.consume(chunk.size());
    if (!out.emit(chunk)) return {StreamEnd::kStopped, ""};
  }
  if (!in.read_error().empty()) return {StreamEnd::kReadError, in.read_error()};
  return {};
}

StreamEnd decode(const std::string& path, Compression c, compressed::InputFile& in,
                 compressed::Output& out, DecompressReport& report) {
  switch (c) {
    case Compression::kNone:
      return pass_through(in, out);
    case Compression::kGzip:
      return compressed::decode_gzip(in, out);
    case Compression::kZlib:
      return compressed::decode_zlib(in, out);
    case Compression::kXz:
      return compressed::decode_xz(in, out);
    case Compression::kBzip2:
      return compressed::decode_bzip2(in, out);
    case Compression::kZip: {
      compressed::ZipReport zip;
      StreamEnd end = compressed::decode_zip(in, out, zip);
      report.zip_entry = zip.entry;
      for (const std::string& note : zip.notes) report.warnings.push_back(path + ": " + note);
      return end;
    }
  }
  return {};
}

// Turns the decoder's result into the report's messages, each naming the file.
void describe(const std::string& path, const StreamEnd& end, DecompressReport& r) {
  const std::string name(compression_name(r.compression));
  const std::string so_far = "the " + std::to_string(r.bytes) + " bytes decompressed before";
  switch (end.kind) {
    case StreamEnd::kComplete:
      if (end.trailing_data) {
        r.warnings.push_back(path + ": data after the end of the " + name +
                             " stream (from offset " + std::to_string(end.trailing_offset) +
                             ") ignored");
      }
      break;
    case StreamEnd::kTruncated:
      r.truncated = true;
      r.warnings.push_back(path + ": " + name + " stream is truncated (the file ends inside it); " +
                           so_far + " the cut were read");
      break;
    case StreamEnd::kCorrupt:
      r.error =
          path + ": corrupt " + name + " data: " + end.detail + "; " + so_far + " it were read";
      break;
    case StreamEnd::kStopped:
      r.stopped = true;
      break;
    case StreamEnd::kReadError:
      r.error = "cannot read " + path + ": " + end.detail + " (after " + std::to_string(r.bytes) +
                " decompressed bytes)";
      break;
    case StreamEnd::kUnusable:
      r.error = path + ": " + end.detail + "; file skipped";
      break;
  }
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

DecompressReport read_decompressed(const std::string& path, const DecompressedChunkFn& fn) {
  DecompressReport report;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    report.error = "cannot open " + path + ": " + std::strerror(errno);
    return report;
  }
  compressed::InputFile in(fd);
  in.want(kCompressionMagicBytes);
  const std::string_view head = in.buffered().substr(0, kCompressionMagicBytes);
  const Compression by_content = compression_from_magic(head);
  const Compression by_name = compression_from_extension(base_name(path));
  StreamEnd end;
  if (!in.read_error().empty()) {
    end = {StreamEnd::kReadError, in.read_error()};
  } else if (by_content != Compression::kNone) {
    report.compression = by_content;
    // Kieker's BZip2 filter names its files .gz: expected, not a mismatch.
    const bool kiekers_bzip2 = by_name == Compression::kGzip && by_content == Compression::kBzip2;
    if (by_content != by_name && !kiekers_bzip2) {
      const std::string claimed =
          by_name == Compression::kNone
              ? "a name without a compression extension"
              : "the " + std::string(compression_extension(by_name)) + " extension";
      report.warnings.push_back(path + ": " + std::string(compression_name(by_content)) +
                                " data despite " + claimed + "; read as " +
                                std::string(compression_name(by_content)));
    }
  } else if (by_name != Compression::kNone && !could_be_cut_signature(head, by_name)) {
    // Uncompressed Kieker data cannot be told from damaged compressed data here.
    report.error = path + ": not " + std::string(compression_name(by_name)) + " data despite the " +
                   std::string(compression_extension(by_name)) +
                   " extension (no known compression signature); file skipped";
    ::close(fd);
    return report;
  } else {
    report.compression = by_name;
  }
  if (end.kind == StreamEnd::kComplete) {
    compressed::Output out(fn);
    end = decode(path, report.compression, in, out, report);
    report.bytes = out.delivered();
  }
  ::close(fd);
  describe(path, end, report);
  return report;
}

}  // namespace sonde::format
