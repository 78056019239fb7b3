// Kieker's text log lines (.dat, anchor §2.3):
//   $<typeId>;<loggingTimestamp>;<field>;<field>...
// Numbers in Java decimal notation, booleans true/false, arrays as a count
// followed by their elements, strings raw. Kieker never escapes strings and
// its reader pairs a `\` with the next character, so a `;`, CR, LF or an
// unpaired trailing `\` in a string cannot be represented: the encoder
// replaces each such character with kDatSubstitute and counts the values
// it altered. Lossless strings need the .bin format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/kieker_map.hpp"
#include "format/record.hpp"

namespace sonde::format::kieker {

inline constexpr char kDatSubstitute = '_';

// Java's Double.toString / Float.toString (JDK 19+, shortest round trip):
// "1.0", "0.001", "1.0E7", "4.9E-324", "NaN", "-Infinity".
void append_java_double(std::string& out, double v);
void append_java_float(std::string& out, float v);
// Accepts what Double.parseDouble accepts for decimal input (sign, NaN,
// Infinity, exponent, trailing d/D/f/F). False if `s` is not a number.
bool parse_java_double(std::string_view s, double* out);
bool parse_java_float(std::string_view s, float* out);

// Appends the line for `r` (ending in '\n') with `type_id` as its type.
// Returns the number of values (strings, array elements, chars) altered.
// A value whose alternative does not fit its field is written as zero/empty.
size_t encode_dat_line(const Record& r, int32_t type_id, std::string& out);

enum class DatStatus {
  kOk,
  kUnknownTypeId,  // the id is not in the registry
  kUnknownClass,   // the class has no built-in schema; the line is skipped
  kMalformed,
};

// Decodes one line without its terminator (a trailing '\r' is ignored).
// Strings are interned in `pool`. `detail` receives the reason for
// kMalformed and kUnknownTypeId, and the class name for kUnknownClass.
DatStatus decode_dat_line(std::string_view line, ReaderRegistry& registry, StringPool& pool,
                          Record& out, std::string* detail);

// Longer lines are not Kieker's (a binary file named .dat?) and are skipped
// rather than buffered.
inline constexpr size_t kMaxDatLine = size_t{16} << 20;

// Decodes a .dat stream fed in arbitrary chunks (lines may straddle chunks).
// Malformed lines are reported with their line number and skipped; an
// unparsable last line without a newline is reported as truncation.
class DatStreamDecoder {
 public:
  DatStreamDecoder(ReaderRegistry& registry, StringPool& pool, RecordSink& sink, FileReport& report)
      : registry_(registry), pool_(pool), sink_(sink), report_(report) {}

  // Returns false once the sink has asked to stop.
  bool feed(std::string_view chunk);
  // Decodes a last line that has no terminator and emits the file's warnings.
  bool finish();
  uint64_t lines() const { return line_no_; }

 private:
  bool line(std::string_view text, bool unterminated);

  ReaderRegistry& registry_;
  StringPool& pool_;
  RecordSink& sink_;
  FileReport& report_;
  std::string partial_;
  Record record_;
  std::string detail_;
  uint64_t line_no_ = 0;
  bool stopped_ = false;
  bool overlong_ = false;
};

}  // namespace sonde::format::kieker
