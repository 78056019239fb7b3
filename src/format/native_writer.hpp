// Writes sonde's native log: a file header, then self-contained chunks of
// items (strings, schemas, operations, thread event blocks, records), each
// compressed and protected by a count and a CRC so that a truncated file is
// readable up to its last complete chunk. Layout: docs/formats/native.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/address_cache.hpp"
#include "format/byte_sink.hpp"
#include "format/native_format.hpp"
#include "format/record.hpp"
#include "format/serial_cache.hpp"
#include "format/varint.hpp"
#include "format/w3c_ids.hpp"

namespace sonde::format {

struct NativeWriterOptions {
  native::Codec codec = native::Codec::kZstd;
  int level = 1;                   // zstd level (lz4: acceleration)
  size_t chunk_target = 1u << 20;  // flush a chunk once its raw payload exceeds this
  // Also keep every definition item (META, STRING, SCHEMA, THREAD,
  // OPERATION, CLOCK) in dictionary(): a stream that restarts on a new
  // connection replays them so that later chunks decode there.
  bool keep_dictionary = false;
  // Chunks are written only by flush(true): the caller picks the chunk
  // boundaries (the collector cuts its logs where a sender's chunks end).
  // chunk_target is then the payload size prepared for.
  bool manual_flush = false;
};

class NativeWriter {
 public:
  NativeWriter(ByteSink& sink, NativeWriterOptions options = {});
  ~NativeWriter();
  NativeWriter(const NativeWriter&) = delete;
  NativeWriter& operator=(const NativeWriter&) = delete;

  // Writes the file header. Must be called once, first.
  bool begin();
  // The 16-byte file header, and an uncompressed chunk holding `items`
  // items: how a stream starts on a new connection.
  static std::string file_header();
  static std::string frame_chunk(std::string_view payload, uint32_t items);

  uint32_t string_id(std::string_view s);  // interns; emits a STRING item on first use
  void meta(std::string_view key, std::string_view value);
  void thread(uint32_t index, uint64_t os_tid, std::string_view name);
  void operation(uint32_t id, std::string_view name, native::OperationKind kind,
                 std::string_view module, uint64_t address, std::string_view file, uint32_t line);
  void clock(uint64_t tsc, int64_t epoch_ns, double ns_per_tick);
  void loss(uint32_t thread, uint64_t events, std::string_view reason);
  void record(const Record& r);

  // One block of events from one thread; timestamps are delta-encoded
  // against the previous event's within the block.
  void begin_events(uint32_t thread, uint64_t base_tsc);
  void enter(uint64_t tsc, uint32_t op) {
    reserve_block(1).event(tsc, native::EventKind::kEnter, op);
  }
  void exit(uint64_t tsc, uint32_t op) {
    reserve_block(1).event(tsc, native::EventKind::kExit, op);
  }
  void exit_failed(uint64_t tsc, uint32_t op, uint32_t cause_string_id) {
    reserve_block(1).exit_failed(tsc, op, cause_string_id);
  }
  void trace_begin(uint64_t tsc, uint64_t trace_id, int64_t parent_trace_id,
                   int32_t parent_order_id, const w3c::Context& w3c = {}) {
    BlockCursor& c = reserve_block(2);
    if (w3c.present()) c.trace_context(tsc, w3c);
    c.trace_begin(tsc, trace_id, parent_trace_id, parent_order_id);
  }
  void lost(uint64_t tsc, uint64_t count) { reserve_block(1).lost(tsc, count); }
  void end_events();

  // Encodes events of the open block without a bounds check per event: the
  // monitor's writer thread encodes whole buffers of raw events straight
  // into the block, and per-event checks and calls were most of its cost.
  // reserve_block(n) makes room for n more events of any kind and returns
  // the block's cursor; write at most n events through it, through a local
  // copy (see commit_block). The cursor stays valid until the next
  // reserve_block, begin_events or end_events.
  //
  // A block is two streams (format version 2): time deltas, and everything
  // else. Apart, the timestamps' noise no longer breaks up the repeating
  // operation patterns, so both compress faster and smaller.
  class BlockCursor {
   public:
    void event(uint64_t tsc, native::EventKind kind, uint32_t op) {
      uint64_t delta = time_delta(tsc);
      uint64_t head = uint64_t{op} << 3 | static_cast<uint64_t>(kind);
      ++count_;
      // Calls nanoseconds apart, among the first 16 operations: a byte in
      // each stream, one test for both.
      if ((delta | head) < 0x80) [[likely]] {
        *t_++ = static_cast<char>(delta);
        *e_++ = static_cast<char>(head);
        return;
      }
      t_ = put_varint_raw(t_, delta);
      e_ = put_varint_raw(e_, head);
    }
    void exit_failed(uint64_t tsc, uint32_t op, uint32_t cause_string_id) {
      event(tsc, native::EventKind::kExitFailed, op);
      e_ = put_varint_raw(e_, cause_string_id);
    }
    void trace_begin(uint64_t tsc, uint64_t trace_id, int64_t parent_trace_id,
                     int32_t parent_order_id) {
      event(tsc, native::EventKind::kTraceBegin, 0);
      ++markers_;
      // Relative to the block's previous trace id: a thread's ids are
      // consecutive, so the event stream repeats exactly from trace to
      // trace and compresses to almost nothing.
      e_ = put_varint_raw(e_, zigzag64(static_cast<int64_t>(trace_id - last_trace_)));
      last_trace_ = trace_id;
      e_ = put_varint_raw(e_, zigzag64(parent_trace_id));
      e_ = put_varint_raw(e_, zigzag64(parent_order_id));
    }
    // Before the trace_begin of a trace that continued a W3C trace sonde
    // did not start; counts as one of the reserved events.
    void trace_context(uint64_t tsc, const w3c::Context& w3c) {
      event(tsc, native::EventKind::kTraceContext, 0);
      ++markers_;
      e_ = put_varint_raw(e_, w3c.trace_id_high);
      e_ = put_varint_raw(e_, w3c.trace_id_low);
      e_ = put_varint_raw(e_, w3c.parent_span_id);
    }
    void lost(uint64_t tsc, uint64_t count) {
      event(tsc, native::EventKind::kLost, 0);
      ++markers_;
      e_ = put_varint_raw(e_, count);
    }

    uint64_t last_tsc() const { return last_tsc_; }
    uint64_t count() const { return count_; }

   private:
    friend class NativeWriter;
    // Timestamps within a thread only grow; a clock step backwards (non-TSC
    // timers can do that) is stored as a zero delta rather than wrapping.
    uint64_t time_delta(uint64_t tsc) {
      uint64_t delta = tsc >= last_tsc_ ? tsc - last_tsc_ : 0;
      last_tsc_ = tsc >= last_tsc_ ? tsc : last_tsc_;
      return delta;
    }
    char* t_ = nullptr;  // time stream
    char* e_ = nullptr;  // event stream
    uint64_t last_tsc_ = 0;
    uint64_t last_trace_ = 0;  // trace id of the block's previous trace begin
    uint64_t count_ = 0;
    uint64_t markers_ = 0;  // trace begins and lost markers: not probe events
  };
  // Per event at most: a 10-byte time delta; in the event stream a trace
  // begin's head, trace id, parent trace and parent order (1 + 10 + 10 + 10).
  static constexpr size_t kMaxTimeBytes = 10;
  static constexpr size_t kMaxEventBytes = 31;
  BlockCursor& reserve_block(size_t events) {
    if (static_cast<size_t>(time_end_ - cursor_.t_) < events * kMaxTimeBytes ||
        static_cast<size_t>(event_end_ - cursor_.e_) < events * kMaxEventBytes) {
      grow_block(events);
    }
    return cursor_;
  }
  // Stores a copy of the cursor back. Encoding through a local copy lets the
  // compiler keep it in registers: stores through its char pointers could
  // otherwise alias the cursor itself and force reloads after every byte.
  void commit_block(const BlockCursor& c) { cursor_ = c; }
  // Drops the open block (a writer that failed keeps nothing).
  void discard_events() { block_open_ = false; }

  // Compresses and writes the pending chunk if it has reached the target size
  // (or always, with force). Returns false once the sink has failed.
  bool flush(bool force = false);
  // Writes the END item and the last chunk.
  bool finish(uint64_t events_written, uint64_t events_lost);

  // The definition items written so far, in order (keep_dictionary only).
  std::string_view dictionary() const { return dictionary_; }
  uint32_t dictionary_items() const { return dictionary_items_; }

  // Payload bytes waiting for the next chunk.
  size_t pending_bytes() const { return payload_.size(); }

  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t chunks_written() const { return chunks_; }

 private:
  // Events are encoded through raw pointers because per-byte string
  // appends dominated the writer thread's profile.
  void grow_block(size_t events);
  static uint64_t zigzag64(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }
  void item(native::Tag tag) {
    payload_.push_back(static_cast<char>(tag));
    ++items_;
  }
  // Copies the definition item that starts at payload_[start] into the dictionary.
  void remember(size_t start) {
    if (!options_.keep_dictionary) return;
    dictionary_.append(payload_, start);
    ++dictionary_items_;
  }
  uint32_t schema_id(const RecordSchema& schema);
  bool write_chunk();

  ByteSink& sink_;
  NativeWriterOptions options_;
  std::string payload_;
  uint32_t items_ = 0;
  // The open block's two streams, valid up to cursor_.t_ and cursor_.e_.
  std::string time_block_;
  std::string event_block_;
  BlockCursor cursor_;  // write positions, previous timestamp and count of the open block
  char* time_end_ = nullptr;
  char* event_end_ = nullptr;
  uint32_t block_thread_ = 0;
  uint64_t block_base_tsc_ = 0;
  bool block_open_ = false;
  // Looked up with string_views (string_id), no key built per lookup.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> strings_;
  // Strings found first by where their text lies: a collector's decoded
  // Kieker records point into the connection's string registry. (Hashing
  // every string value led the Kieker protocol's profile,
  // docs/PERFORMANCE.md.)
  AddressCache<uint32_t, 1024> string_cache_;
  std::vector<uint32_t> record_string_ids_;  // reused by record()
  // Schema ids by the schema's serial, not its address: a schema freed and
  // another made at the same address must not take its id.
  std::unordered_map<uint64_t, uint32_t> schemas_;
  SerialCache<uint32_t> recent_schemas_;
  std::string compressed_;
  void* zstd_ctx_ = nullptr;
  bool failed_ = false;
  std::string error_;
  uint64_t bytes_written_ = 0;
  uint64_t chunks_ = 0;
  uint64_t chunk_probe_events_ = 0;
  std::string dictionary_;
  uint32_t dictionary_items_ = 0;
};

}  // namespace sonde::format
