// Kieker's binary records (.bin files and TCP record frames, anchor §2.4):
// big-endian int32 typeId, int64 loggingTimestamp, then the payload with
// strings as int32 registry ids, booleans as 1 byte, chars as 2 bytes and
// arrays as an int32 count followed by the elements. There is no length
// field, so a record can only be read by a reader that knows its schema.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "format/kieker_map.hpp"
#include "format/record.hpp"

namespace sonde::format::kieker {

// Appends the header and payload of `r`. String values get ids from
// `strings`; ids >= a strings.size() taken before the call are new and must
// reach the reader (kieker.map, TCP registry frame) before this record.
// A value whose alternative does not fit its field is written as zero/empty
// (check values_match_schema() first; KiekerLogWriter does).
void encode_bin_record(const Record& r, int32_t type_id, WriterRegistry& strings, std::string& out);

enum class BinStatus {
  kOk,
  kNeedMore,       // `data` ends inside the record
  kUnknownTypeId,  // the header id is not registered: nothing after it can be read
  kUnknownClass,   // no built-in schema: the record's length is unknown
  kBadString,      // a string id is not registered; the record's size is known
  kBadArray,       // negative array count
};

// Decodes the record at the front of `data`. `size` receives the record's
// size (kOk, kBadString) or, for kNeedMore, the least number of bytes the
// record needs as far as it could be parsed. `detail` explains failures.
BinStatus decode_bin_record(std::string_view data, ReaderRegistry& registry, Record& out,
                            size_t* size, std::string* detail);

// Decodes a .bin stream fed in arbitrary chunks. An unknown type stops the
// decoding of the file (bytes after it are counted, not read); a record with
// an unknown string id is skipped; a truncated last record is reported.
class BinStreamDecoder {
 public:
  BinStreamDecoder(ReaderRegistry& registry, RecordSink& sink, FileReport& report)
      : registry_(registry), sink_(sink), report_(report) {}

  // Returns false once the sink has asked to stop.
  bool feed(std::string_view chunk);
  // Reports a truncated last record or the bytes left unread after a stop.
  bool finish();
  // True once an unknown type made the rest of the file unreadable.
  bool halted() const { return halted_; }

 private:
  void halt(std::string message, bool is_error);

  ReaderRegistry& registry_;
  RecordSink& sink_;
  FileReport& report_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t base_offset_ = 0;  // file offset of buf_[0]
  uint64_t unread_ = 0;       // bytes after a halt
  uint64_t halt_offset_ = 0;
  std::string halt_message_;
  bool halt_is_error_ = false;
  bool halted_ = false;
  bool stopped_ = false;
  Record record_;
  std::string detail_;
};

}  // namespace sonde::format::kieker
