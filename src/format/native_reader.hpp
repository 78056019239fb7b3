// Reads sonde's native log chunk by chunk with bounded memory. Every problem
// (bad magic, truncated chunk, CRC mismatch, corrupt item) is reported with
// the file offset; chunks before the problem are delivered intact.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "format/native_format.hpp"
#include "format/record.hpp"
#include "format/w3c_ids.hpp"

namespace sonde::format {

struct NativeOperation {
  uint32_t id;
  std::string_view name;
  native::OperationKind kind;
  std::string_view module;
  uint64_t address;
  std::string_view file;
  uint32_t line;
};

struct NativeThread {
  uint32_t index;
  uint64_t os_tid;
  std::string_view name;
};

struct NativeEvent {
  native::EventKind kind;
  uint32_t thread;
  int64_t time_ns;         // converted with the chunk's clock calibration
  uint64_t tsc;            // raw timer value
  uint32_t op = 0;         // enter/exit/failed
  std::string_view cause;  // failed
  uint64_t trace_id = 0;   // trace begin
  int64_t parent_trace_id = -1;
  int32_t parent_order_id = -1;
  w3c::Context w3c;   // trace begin: the W3C trace it continued, if sonde did not start it
  uint64_t lost = 0;  // lost marker
};

// Callbacks for every item kind. Views stay valid for the reader's lifetime.
class NativeVisitor {
 public:
  virtual ~NativeVisitor() = default;
  virtual void on_meta(std::string_view /*key*/, std::string_view /*value*/) {}
  virtual void on_thread(const NativeThread& /*t*/) {}
  virtual void on_operation(const NativeOperation& /*op*/) {}
  virtual void on_event(const NativeEvent& /*e*/) {}
  virtual void on_record(const Record& /*r*/) {}
  virtual void on_loss(uint32_t /*thread*/, uint64_t /*events*/, std::string_view /*reason*/) {}
  // Before the items of chunk `index` (0 = the first chunk after the header).
  virtual void on_chunk(uint64_t /*index*/) {}
  // Readers that keep the bytes as they came (the collector stores a
  // sender's chunks verbatim), after the checks: the 16-byte file header
  // once it is read, and each chunk (its header and stored payload) once
  // every item of it decoded. With NativeStreamReader::keep_definitions,
  // `definitions` holds the chunk's META, STRING, SCHEMA, THREAD,
  // OPERATION and CLOCK items as encoded, `definition_items` of them (what
  // later chunks may refer to when this one's events are not kept).
  virtual void on_stream_header(std::string_view /*header*/) {}
  virtual void on_chunk_done(uint64_t /*index*/, std::string_view /*chunk*/,
                             std::string_view /*definitions*/, uint32_t /*definition_items*/) {}
};

struct NativeReadResult {
  bool ok = false;         // false: an error stopped reading (see error)
  uint16_t version = 0;    // the file's format version
  std::string error;       // names the file, the offset and the reason
  bool clean_end = false;  // the END item was present (the writer closed the log)
  bool truncated = false;  // the file ends inside a chunk (e.g. the program was killed)
  uint64_t truncated_bytes = 0;
  uint64_t chunks = 0;
  uint64_t events = 0;
  uint64_t records = 0;
  uint64_t lost_reported = 0;       // sum of LOSS items and lost markers
  uint64_t end_events_written = 0;  // totals the writer stored in END
  uint64_t end_events_lost = 0;
  uint64_t file_bytes = 0;
};

// Reads a native log fed in pieces of any size (a socket, a file read in
// blocks), with the same checks as read_native_file: complete chunks are
// decoded as soon as they are in, an incomplete one waits (memory: one
// chunk). After an error, feed() returns false and result().error names
// the stream offset.
class NativeStreamReader {
 public:
  NativeStreamReader(NativeVisitor& visitor, std::string name);
  ~NativeStreamReader();
  NativeStreamReader(const NativeStreamReader&) = delete;
  NativeStreamReader& operator=(const NativeStreamReader&) = delete;

  bool feed(const void* data, size_t size);
  // Collect each chunk's definition items for on_chunk_done (off by
  // default: plain readers do not pay for the copy).
  void keep_definitions(bool keep);
  // Events' time_ns converted from the timer (on by default); off, it is
  // 0 (the collector's listener only counts a native stream's records).
  void convert_times(bool convert);
  // End of input: an incomplete last chunk is reported as truncated.
  const NativeReadResult& finish();
  const NativeReadResult& result() const;
  // Bytes of the header and the complete chunks decoded so far.
  uint64_t consumed() const;
  bool failed() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Reads `path`, calling `visitor` for every item in file order.
NativeReadResult read_native_file(const std::string& path, NativeVisitor& visitor);
// Reads an in-memory log (tests, fuzzing).
NativeReadResult read_native_bytes(std::string_view bytes, NativeVisitor& visitor,
                                   const std::string& name = "<memory>");

// True if the file starts with the native magic.
bool looks_like_native_file(const std::string& path);

}  // namespace sonde::format
