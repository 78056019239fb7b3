// Protocol Buffers wire format, encoding only: the few field kinds the
// Perfetto writer needs (varint, fixed64, double, length-delimited). A
// message is built bottom-up: a nested message is encoded into its own
// ProtoMessage first and appended with message(). No reflection, no schema
// at run time; the schema subset is docs/formats/perfetto.md. Written here
// instead of linking libprotobuf: a dozen lines, and no generated code or
// protoc at build time.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sonde::analysis::proto {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

class ProtoMessage {
 public:
  void clear() { bytes_.clear(); }
  bool empty() const { return bytes_.empty(); }
  const std::string& bytes() const { return bytes_; }

  void uint(uint32_t field, uint64_t value) {
    tag(field, kVarint);
    varint(value);
  }
  // int32/int64 fields: two's complement as a 64-bit varint (not zigzag).
  void sint_as_int(uint32_t field, int64_t value) { uint(field, static_cast<uint64_t>(value)); }
  void boolean(uint32_t field, bool value) { uint(field, value ? 1 : 0); }
  void fixed64(uint32_t field, uint64_t value) {
    tag(field, kFixed64);
    char raw[8];
    for (int i = 0; i < 8; ++i) raw[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
    bytes_.append(raw, 8);
  }
  void float64(uint32_t field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    fixed64(field, bits);
  }
  void text(uint32_t field, std::string_view value) {
    tag(field, kLengthDelimited);
    varint(value.size());
    bytes_.append(value);
  }
  void message(uint32_t field, const ProtoMessage& nested) { text(field, nested.bytes_); }
  // The tag and length of a length-delimited field whose `size` bytes the
  // caller writes itself (a file of messages streamed without a copy).
  void length_delimited_header(uint32_t field, uint64_t size) {
    tag(field, kLengthDelimited);
    varint(size);
  }

 private:
  void tag(uint32_t field, WireType type) { varint((uint64_t{field} << 3) | type); }
  void varint(uint64_t value) {
    while (value >= 0x80) {
      bytes_.push_back(static_cast<char>((value & 0x7F) | 0x80));
      value >>= 7;
    }
    bytes_.push_back(static_cast<char>(value));
  }

  std::string bytes_;
};

}  // namespace sonde::analysis::proto
