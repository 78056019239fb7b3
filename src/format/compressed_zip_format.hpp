// The parts of PKWARE's APPNOTE that sonde's zip reader (compressed_zip.cpp)
// and writer (compressed_zip_writer.cpp) share: record signatures, general
// purpose flags and compression methods.
#pragma once

#include <cstdint>

namespace sonde::format::compressed::zip {

inline constexpr uint32_t kLocalHeader = 0x04034b50;
inline constexpr uint32_t kCentralHeader = 0x02014b50;
inline constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
inline constexpr uint32_t kZip64EndOfCentralDirectory = 0x06064b50;
inline constexpr uint32_t kDataDescriptor = 0x08074b50;
inline constexpr uint16_t kFlagEncrypted = 1 << 0;
inline constexpr uint16_t kFlagDataDescriptor = 1 << 3;
inline constexpr uint16_t kMethodStored = 0;
inline constexpr uint16_t kMethodDeflate = 8;

}  // namespace sonde::format::compressed::zip
