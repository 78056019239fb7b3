// A protobuf wire-format reader for tests that check what sonde encodes
// (Perfetto traces, OTLP requests): every field of one message, nested
// messages decoded on demand. A malformed message fails the test.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace sonde::test {

struct ProtoField {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;      // varint or fixed64
  std::string_view bytes;  // length-delimited
};

inline std::vector<ProtoField> proto_decode(std::string_view msg) {
  std::vector<ProtoField> fields;
  size_t i = 0;
  auto varint = [&]() {
    uint64_t v = 0;
    for (int shift = 0; i < msg.size() && shift < 64; shift += 7) {
      const auto byte = static_cast<uint8_t>(msg[i++]);
      v |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ADD_FAILURE() << "truncated varint";
    i = msg.size();
    return v;
  };
  while (i < msg.size()) {
    const uint64_t tag = varint();
    ProtoField f;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7);
    if (f.wire == 0) {
      f.value = varint();
    } else if (f.wire == 1) {
      if (msg.size() - i < 8) {
        ADD_FAILURE() << "truncated fixed64";
        return fields;
      }
      for (int b = 0; b < 8; ++b) f.value |= uint64_t{static_cast<uint8_t>(msg[i + b])} << (8 * b);
      i += 8;
    } else if (f.wire == 2) {
      const uint64_t size = varint();
      if (size > msg.size() - i) {
        ADD_FAILURE() << "length past the end";
        return fields;
      }
      f.bytes = msg.substr(i, size);
      i += size;
    } else {
      ADD_FAILURE() << "unexpected wire type " << f.wire;
      return fields;
    }
    fields.push_back(f);
  }
  return fields;
}

inline std::vector<ProtoField> proto_all(const std::vector<ProtoField>& fields, uint32_t number) {
  std::vector<ProtoField> out;
  for (const ProtoField& f : fields)
    if (f.number == number) out.push_back(f);
  return out;
}

// The first field `number`, or nullptr.
inline const ProtoField* proto_first(const std::vector<ProtoField>& fields, uint32_t number) {
  for (const ProtoField& f : fields)
    if (f.number == number) return &f;
  return nullptr;
}

}  // namespace sonde::test
