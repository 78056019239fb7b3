// Constants of sonde's native log format. The byte layout is documented in
// docs/formats/native.md; keep the two in step.
#pragma once

#include <cstdint>
#include <string_view>

namespace sonde::format::native {

inline constexpr std::string_view kFileMagic = "SONDELOG";  // 8 bytes
// Version 2 stores an EVENTS item's timestamps and the rest of its events as
// two separate streams (see kEvents); version 1 interleaved them. Readers
// accept both; writers write kVersion.
inline constexpr uint16_t kVersion = 2;
inline constexpr uint16_t kOldestReadableVersion = 1;
inline constexpr size_t kFileHeaderSize = 16;        // magic, u16 version, u16 flags, u32 reserved
inline constexpr uint32_t kChunkMagic = 0x4B484353;  // "SCHK" in little-endian
inline constexpr size_t kChunkHeaderSize = 24;
inline constexpr uint32_t kMaxChunkRawSize = 64u << 20;  // readers reject larger chunks

enum class Codec : uint8_t { kNone = 0, kZstd = 1, kLz4 = 2 };

// Item tags inside a chunk's payload.
enum class Tag : uint8_t {
  kMeta = 1,    // str key, str value
  kString = 2,  // varint id, str
  kSchema = 3,  // varint id, varint class-name string id, varint n, n × (u8 type, varint name id)
  kRecord = 4,  // varint schema id, svarint logging ts, values
  kThread = 5,  // varint thread index, varint os tid, str name
  kOperation = 6,  // varint op id, varint name id, u8 kind, varint module id, varint addr, varint
                   // file id, varint line
  kEvents = 7,     // varint thread index, varint count, varint base tsc, then
                   // v2: varint time-stream bytes, time stream, event stream;
                   // v1: count × event
  kClock = 8,      // varint tsc, svarint epoch ns, f64 ns per tick
  kLoss = 9,       // varint thread index, varint events lost, varint reason string id
  kEnd = 10,       // varint events written, varint events lost; marks a clean close
};

// Event kinds inside a kEvents block.
//   Version 2: the time stream holds varint(tsc - previous tsc) per event;
//   the event stream holds per event varint(op << 3 | kind), op being 0 for
//   kinds without one, then the kind's further fields. Timestamps apart
//   from the rest compress about three times faster and to a third of the
//   size (MooBench, zstd; docs/formats/native.md).
//   Version 1: per event varint((tsc - previous tsc) << 3 | kind), then the
//   op as a varint (kinds with one) and the further fields.
enum class EventKind : uint8_t {
  kEnter = 0,       // op
  kExit = 1,        // op
  kExitFailed = 2,  // op; varint cause string id
  kTraceBegin = 3,  // trace id (v2: svarint difference to the block's previous trace begin's
                    // id, 0 before the first; v1: varint), svarint parent trace id, svarint
                    // parent order id
  kLost = 4,        // varint events lost here (the thread's trace state is broken until depth 0)
  // Right before the kTraceBegin of a trace that continued a W3C trace
  // sonde did not start: varint trace id high half, varint low half, varint
  // the caller's span id (0: none). Readers attach it to that trace begin.
  // Since 2026-12-03; older readers reject a log that holds one.
  kTraceContext = 5,
};

enum class OperationKind : uint8_t { kFunction = 0, kManual = 1 };

}  // namespace sonde::format::native
