// Internal to compressed_output.cpp and its encoders: one compressor behind
// a common interface.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "format/compressed_format.hpp"

namespace sonde::format::compressed {

class Encoder {
 public:
  enum class Mode {
    kRun,     // compress as much as is efficient; may hold data back
    kFlush,   // emit everything so far as decodable output; the stream goes on
    kFinish,  // end the stream
  };
  virtual ~Encoder() = default;
  // Appends the compressed form of `in` to `out`. Returns "" or the library's message.
  virtual std::string encode(std::string_view in, Mode mode, std::string& out) = 0;
};

// gzip, zlib, xz or bzip2. Null for kNone and kZip.
std::unique_ptr<Encoder> make_stream_encoder(Compression c);
// Raw deflate, for zip entries.
std::unique_ptr<Encoder> make_raw_deflate_encoder();
// A zip archive holding one entry named `entry_name`.
std::unique_ptr<Encoder> make_zip_encoder(std::string entry_name);

}  // namespace sonde::format::compressed
