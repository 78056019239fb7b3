// LEB128 varints and zigzag, used by the native format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sonde::format {

inline constexpr size_t kMaxVarintBytes = 10;

// Writes `v` at `p`, which must have kMaxVarintBytes of room, and returns
// the byte after it. For encoders that make room once for many values:
// appending to a string value by value was the top entry of two profiles
// (the writer thread's events, the collector's index rows).
inline char* put_varint_raw(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

inline void put_varint(std::string& out, uint64_t v) {
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

// Differences and sums of timestamps for delta encodings, modulo 2^64:
// a hostile log's times can be any int64, whose difference overflows
// (undefined for signed integers); wrapping both ways round-trips exactly.
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void put_str(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

// Reads from a bounded byte range; every read checks the bound, so corrupt
// input sets `ok = false` instead of reading past the end.
struct ByteCursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  bool at_end() const { return p >= end; }
  uint8_t u8() {
    if (p >= end) return fail();
    return *p++;
  }
  uint64_t varint() {
    // With a whole varint's room left, no byte needs its own bound check:
    // decoding was the largest entry of the collector's profile (every
    // field of every record and event is one). Same results as the loop.
    if (end - p >= static_cast<std::ptrdiff_t>(kMaxVarintBytes)) [[likely]] {
      uint64_t b = *p++;
      if (b < 0x80) return b;
      uint64_t v = b & 0x7f;
      for (int shift = 7; shift < 70; shift += 7) {
        b = *p++;
        v |= (b & 0x7f) << shift;
        if (b < 0x80) return v;
      }
      return fail();  // more than 10 bytes: not a varint
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) return fail();
      uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return fail();  // more than 10 bytes: not a varint
  }
  int64_t svarint() { return unzigzag(varint()); }
  double f64() {
    if (end - p < 8) return static_cast<double>(fail());
    double d;
    std::memcpy(&d, p, 8);
    p += 8;
    return d;
  }
  std::string_view str() {
    uint64_t n = varint();
    if (!ok || n > static_cast<uint64_t>(end - p)) {
      fail();
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
  uint8_t fail() {
    ok = false;
    p = end;
    return 0;
  }
};

}  // namespace sonde::format
