// The native log's reader (docs/formats/native.md). Over 500 lines: one
// decoder for every item kind, which share its clock segments and
// definition tables, and the streaming reader that feeds it chunks.
#include "format/native_reader.hpp"

#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <unordered_map>
#include <vector>

#include "format/string_pool.hpp"
#include "format/varint.hpp"

namespace sonde::format {

using native::EventKind;
using native::Tag;

namespace {

uint32_t load_u32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct ClockCalibration {
  uint64_t tsc = 0;
  int64_t epoch_ns = 0;
  double ns_per_tick = 1.0;
  int64_t to_ns(uint64_t t) const {
    double d = (static_cast<double>(static_cast<int64_t>(t - tsc))) * ns_per_tick;
    // Round half away from zero, as llround, without the libm call per event.
    return epoch_ns + static_cast<int64_t>(d + (d < 0 ? -0.5 : 0.5));
  }
};

// Every calibration of the log, by timer value: an event is converted with
// the one whose range it falls in, not the newest one read, since a
// thread's buffer can reach the log after a newer calibration (the writer
// starts each one where the previous one is at its timer value, so the
// conversion is monotonic).
class ClockSegments {
 public:
  bool empty() const { return segments_.empty(); }
  void add(const ClockCalibration& k) {
    auto at = std::upper_bound(segments_.begin(), segments_.end(), k.tsc,
                               [](uint64_t t, const ClockCalibration& s) { return t < s.tsc; });
    segments_.insert(at, k);
  }
  int64_t to_ns(uint64_t t) const {
    if (t >= segments_.back().tsc) return segments_.back().to_ns(t);  // almost every event
    auto at = std::upper_bound(segments_.begin(), segments_.end(), t,
                               [](uint64_t v, const ClockCalibration& s) { return v < s.tsc; });
    // Before the first calibration: the first one, extended backwards.
    return (at == segments_.begin() ? *at : *(at - 1)).to_ns(t);
  }

 private:
  std::vector<ClockCalibration> segments_;
};

class Decoder {
 public:
  Decoder(NativeVisitor& v, NativeReadResult& r, uint16_t version)
      : visitor_(v), result_(r), version_(version) {}

  // Decodes one chunk's payload. Returns an error message or "".
  std::string decode(const uint8_t* data, size_t size, uint32_t expected_items) {
    ByteCursor c{data, data + size};
    uint32_t items = 0;
    definitions_.clear();
    definition_items_ = 0;
    while (!c.at_end()) {
      const uint8_t* item_start = c.p;
      auto tag = static_cast<Tag>(c.u8());
      ++items;
      std::string err = decode_item(tag, c);
      if (!err.empty()) return err;
      if (!c.ok) return "item " + std::to_string(items) + " is truncated";
      if (keep_definitions_ && is_definition(tag)) {
        definitions_.append(reinterpret_cast<const char*>(item_start),
                            static_cast<size_t>(c.p - item_start));
        ++definition_items_;
      }
    }
    if (items != expected_items) {
      return "chunk holds " + std::to_string(items) + " items, header says " +
             std::to_string(expected_items);
    }
    return "";
  }

  void keep_definitions(bool keep) { keep_definitions_ = keep; }
  void convert_times(bool convert) { convert_times_ = convert; }
  // The last decoded chunk's definition items (with keep_definitions).
  std::string_view definitions() const { return definitions_; }
  uint32_t definition_items() const { return definition_items_; }

 private:
  static bool is_definition(Tag tag) {
    switch (tag) {
      case Tag::kMeta:
      case Tag::kString:
      case Tag::kSchema:
      case Tag::kThread:
      case Tag::kOperation:
      case Tag::kClock:
        return true;
      default:
        return false;
    }
  }

  std::string_view string_ref(uint64_t id, std::string& err) {
    if (id >= strings_.size()) {
      err = "reference to undefined string " + std::to_string(id);
      return {};
    }
    return strings_[id];
  }

  std::string decode_item(Tag tag, ByteCursor& c) {
    std::string err;
    switch (tag) {
      case Tag::kMeta: {
        std::string_view k = pool_.intern(c.str());
        std::string_view v = pool_.intern(c.str());
        if (c.ok) visitor_.on_meta(k, v);
        return "";
      }
      case Tag::kString: {
        uint64_t id = c.varint();
        std::string_view s = c.str();
        if (!c.ok) return "";
        if (id != strings_.size()) return "string id " + std::to_string(id) + " out of sequence";
        strings_.push_back(pool_.intern(s));
        return "";
      }
      case Tag::kSchema:
        return decode_schema(c);
      case Tag::kRecord:
        return decode_record(c);
      case Tag::kThread: {
        NativeThread t;
        t.index = static_cast<uint32_t>(c.varint());
        t.os_tid = c.varint();
        t.name = pool_.intern(c.str());
        if (c.ok) visitor_.on_thread(t);
        return "";
      }
      case Tag::kOperation: {
        NativeOperation op;
        op.id = static_cast<uint32_t>(c.varint());
        op.name = string_ref(c.varint(), err);
        op.kind = static_cast<native::OperationKind>(c.u8());
        op.module = string_ref(c.varint(), err);
        op.address = c.varint();
        op.file = string_ref(c.varint(), err);
        op.line = static_cast<uint32_t>(c.varint());
        if (!err.empty()) return err;
        if (c.ok) visitor_.on_operation(op);
        return "";
      }
      case Tag::kEvents:
        return decode_events(c);
      case Tag::kClock: {
        ClockCalibration k;
        k.tsc = c.varint();
        k.epoch_ns = c.svarint();
        k.ns_per_tick = c.f64();
        if (!c.ok) return "";
        if (!(k.ns_per_tick > 0 && std::isfinite(k.ns_per_tick))) {
          return "clock calibration has an invalid tick length";
        }
        clocks_.add(k);
        return "";
      }
      case Tag::kLoss: {
        uint32_t thread = static_cast<uint32_t>(c.varint());
        uint64_t n = c.varint();
        std::string_view reason = string_ref(c.varint(), err);
        if (!err.empty()) return err;
        if (c.ok) {
          result_.lost_reported += n;
          visitor_.on_loss(thread, n, reason);
        }
        return "";
      }
      case Tag::kEnd:
        result_.end_events_written = c.varint();
        result_.end_events_lost = c.varint();
        if (c.ok) result_.clean_end = true;
        return "";
    }
    return "unknown item tag " + std::to_string(static_cast<int>(tag));
  }

  std::string decode_schema(ByteCursor& c) {
    std::string err;
    uint64_t id = c.varint();
    std::string_view class_name = string_ref(c.varint(), err);
    uint64_t n = c.varint();
    if (!c.ok) return "";
    if (!err.empty()) return err;
    if (id != schemas_.size()) return "schema id " + std::to_string(id) + " out of sequence";
    if (n > 4096) return "schema with " + std::to_string(n) + " fields";
    auto schema = std::make_unique<RecordSchema>();
    schema->class_name = std::string(class_name);
    for (uint64_t i = 0; i < n; ++i) {
      auto type = static_cast<FieldType>(c.u8());
      std::string_view name = string_ref(c.varint(), err);
      if (!err.empty()) return err;
      if (to_string(type) == "?") return "schema field of unknown type";
      schema->fields.push_back({std::string(name), type});
    }
    // Prefer the built-in definition when it matches, so that consumers can
    // compare schema pointers with the well-known ones.
    const RecordSchema* builtin = find_builtin_schema(schema->class_name);
    if (builtin != nullptr && builtin->fields.size() == schema->fields.size()) {
      bool same = true;
      for (size_t i = 0; i < n; ++i)
        same = same && builtin->fields[i].type == schema->fields[i].type;
      if (same) {
        schemas_.push_back(builtin);
        return "";
      }
    }
    schemas_.push_back(schema.get());
    owned_schemas_.push_back(std::move(schema));
    return "";
  }

  std::string decode_record(ByteCursor& c) {
    std::string err;
    uint64_t sid = c.varint();
    if (!c.ok) return "";
    if (sid >= schemas_.size()) return "record of undefined schema " + std::to_string(sid);
    const RecordSchema* schema = schemas_[sid];
    record_.schema = schema;
    record_.logging_timestamp = c.svarint();
    record_.values.resize(schema->fields.size());
    for (size_t i = 0; i < schema->fields.size() && c.ok; ++i) {
      switch (schema->fields[i].type) {
        case FieldType::kDouble:
        case FieldType::kFloat:
          record_.values[i] = c.f64();
          break;
        case FieldType::kBool:
          record_.values[i] = c.u8() != 0;
          break;
        case FieldType::kString:
          record_.values[i] = string_ref(c.varint(), err);
          break;
        case FieldType::kStringArray: {
          uint64_t n = c.varint();
          if (n > static_cast<uint64_t>(c.end - c.p)) return "string array longer than its chunk";
          std::vector<std::string_view> a;
          for (uint64_t k = 0; k < n && c.ok; ++k) a.push_back(string_ref(c.varint(), err));
          record_.values[i] = std::move(a);
          break;
        }
        default:
          record_.values[i] = c.svarint();
          break;
      }
      if (!err.empty()) return err;
    }
    if (!c.ok) return "";
    ++result_.records;
    visitor_.on_record(record_);
    return "";
  }

  std::string decode_events(ByteCursor& c) {
    NativeEvent e{};
    e.thread = static_cast<uint32_t>(c.varint());
    uint64_t count = c.varint();
    uint64_t tsc = c.varint();
    if (!c.ok) return "";
    if (clocks_.empty()) return "events before any clock calibration";
    // Each event takes at least two bytes; a larger count is corrupt.
    if (count > static_cast<uint64_t>(c.end - c.p)) return "event block count exceeds chunk";
    if (version_ < 2) return decode_events_v1(c, e, count, tsc);
    // Version 2: the time stream, then the event stream.
    uint64_t time_bytes = c.varint();
    if (!c.ok) return "";
    if (time_bytes > static_cast<uint64_t>(c.end - c.p) || time_bytes < count) {
      return "event block time stream does not fit its chunk";
    }
    ByteCursor times{c.p, c.p + time_bytes};
    c.p += time_bytes;
    block_last_trace_ = 0;
    std::string err;
    for (uint64_t i = 0; i < count && c.ok; ++i) {
      tsc += times.varint();
      uint64_t head = c.varint();
      e.kind = static_cast<EventKind>(head & 7);
      uint64_t op = head >> 3;
      event_fields(c, e, tsc, op, err);
      if (!err.empty()) return err;
      if (!c.ok) return "";
      if (!times.ok) return "event block time stream ends early";
      if (e.kind == EventKind::kTraceContext) continue;  // kept for the trace begin after it
      ++result_.events;
      visitor_.on_event(e);
      e.w3c = {};
    }
    if (c.ok && times.p != times.end) return "event block time stream has trailing bytes";
    return "";
  }

  std::string decode_events_v1(ByteCursor& c, NativeEvent& e, uint64_t count, uint64_t tsc) {
    std::string err;
    for (uint64_t i = 0; i < count && c.ok; ++i) {
      uint64_t head = c.varint();
      tsc += head >> 3;
      e.kind = static_cast<EventKind>(head & 7);
      uint64_t op = 0;
      if (e.kind == EventKind::kEnter || e.kind == EventKind::kExit ||
          e.kind == EventKind::kExitFailed) {
        op = c.varint();
      }
      event_fields(c, e, tsc, op, err);
      if (!err.empty()) return err;
      if (!c.ok) return "";
      if (e.kind == EventKind::kTraceContext) continue;  // kept for the trace begin after it
      ++result_.events;
      visitor_.on_event(e);
      e.w3c = {};
    }
    return "";
  }

  // Fills `e` from its kind, time and op and the fields after the op; a
  // problem goes to `err` (one string per event block, not one per event:
  // its making and return showed in the collector's profile).
  void event_fields(ByteCursor& c, NativeEvent& e, uint64_t tsc, uint64_t op, std::string& err) {
    e.tsc = tsc;
    e.time_ns = convert_times_ ? clocks_.to_ns(tsc) : 0;
    e.cause = {};
    switch (e.kind) {
      case EventKind::kEnter:
      case EventKind::kExit:
        e.op = static_cast<uint32_t>(op);
        break;
      case EventKind::kExitFailed:
        e.op = static_cast<uint32_t>(op);
        e.cause = string_ref(c.varint(), err);
        break;
      case EventKind::kTraceBegin:
        if (version_ >= 2) {
          // Relative to the block's previous trace begin (0 before the first).
          block_last_trace_ += static_cast<uint64_t>(c.svarint());
          e.trace_id = block_last_trace_;
        } else {
          e.trace_id = c.varint();
        }
        e.parent_trace_id = c.svarint();
        e.parent_order_id = static_cast<int32_t>(c.svarint());
        break;
      case EventKind::kTraceContext:
        e.w3c.trace_id_high = c.varint();
        e.w3c.trace_id_low = c.varint();
        e.w3c.parent_span_id = c.varint();
        break;
      case EventKind::kLost:
        e.lost = c.varint();
        result_.lost_reported += e.lost;
        break;
      default:
        err = "unknown event kind " + std::to_string(static_cast<int>(e.kind));
        break;
    }
  }

  NativeVisitor& visitor_;
  NativeReadResult& result_;
  StringPool pool_;
  std::vector<std::string_view> strings_;
  std::vector<const RecordSchema*> schemas_;
  std::vector<std::unique_ptr<RecordSchema>> owned_schemas_;
  Record record_;
  ClockSegments clocks_;
  uint16_t version_;
  uint64_t block_last_trace_ = 0;  // v2: trace ids are relative within a block
  bool keep_definitions_ = false;
  bool convert_times_ = true;
  std::string definitions_;
  uint32_t definition_items_ = 0;
};

}  // namespace

// The chunk loop behind both entry points: bytes arrive in pieces of any
// size (a file read in blocks, a socket), complete chunks are checked and
// decoded at once, and an incomplete one waits in buf_.
struct NativeStreamReader::State {
  State(NativeVisitor& v, std::string n) : visitor(v), name(std::move(n)) {}
  ~State() { ZSTD_freeDCtx(dctx); }

  bool fail(uint64_t at, const std::string& why) {
    result.ok = false;
    result.error = name + ": offset " + std::to_string(at) + ": " + why;
    failed = true;
    return false;
  }

  // Decodes what buf_ holds from pos on; false after an error.
  bool consume() {
    if (!decoder) {
      const size_t have = buf.size() - pos;
      const size_t magic = native::kFileMagic.size();
      if (std::string_view(buf.data() + pos, std::min(have, magic)) !=
          native::kFileMagic.substr(0, std::min(have, magic))) {
        return fail(0, "not a sonde native log (bad magic)");
      }
      if (have < native::kFileHeaderSize) return true;
      uint16_t version;
      std::memcpy(&version, buf.data() + pos + 8, 2);
      if (version < native::kOldestReadableVersion || version > native::kVersion) {
        return fail(8, "unsupported native format version " + std::to_string(version));
      }
      result.version = version;
      decoder = std::make_unique<Decoder>(visitor, result, version);
      decoder->keep_definitions(keep_definitions);
      decoder->convert_times(convert_times);
      visitor.on_stream_header(std::string_view(buf.data() + pos, native::kFileHeaderSize));
      pos += native::kFileHeaderSize;
      offset = native::kFileHeaderSize;
    }
    while (buf.size() - pos >= native::kChunkHeaderSize) {
      const char* ch = buf.data() + pos;
      if (load_u32(ch) != native::kChunkMagic) return fail(offset, "bad chunk magic");
      const uint32_t raw_size = load_u32(ch + 8);
      const uint32_t stored_size = load_u32(ch + 12);
      if (raw_size > native::kMaxChunkRawSize || stored_size > native::kMaxChunkRawSize) {
        return fail(offset, "chunk size " + std::to_string(raw_size) + " exceeds the limit");
      }
      if (buf.size() - pos < native::kChunkHeaderSize + stored_size) return true;
      if (!chunk(ch, stored_size)) return false;
      pos += native::kChunkHeaderSize + stored_size;
      offset += native::kChunkHeaderSize + stored_size;
    }
    return true;
  }

  bool chunk(const char* ch, uint32_t stored_size) {
    auto codec = static_cast<native::Codec>(ch[4]);
    const uint32_t raw_size = load_u32(ch + 8);
    const uint32_t items = load_u32(ch + 16);
    const uint32_t crc = load_u32(ch + 20);
    const char* stored = ch + native::kChunkHeaderSize;
    uint32_t actual = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(stored), static_cast<uInt>(stored_size)));
    if (actual != crc) return fail(offset, "chunk checksum mismatch");
    const char* payload = stored;
    if (codec == native::Codec::kZstd) {
      raw.resize(raw_size);
      size_t n = ZSTD_decompressDCtx(dctx, raw.data(), raw.size(), stored, stored_size);
      if (ZSTD_isError(n) || n != raw_size) return fail(offset, "chunk does not decompress (zstd)");
      payload = raw.data();
    } else if (codec == native::Codec::kLz4) {
      raw.resize(raw_size);
      int n = LZ4_decompress_safe(stored, raw.data(), static_cast<int>(stored_size),
                                  static_cast<int>(raw_size));
      if (n < 0 || static_cast<uint32_t>(n) != raw_size) {
        return fail(offset, "chunk does not decompress (lz4)");
      }
      payload = raw.data();
    } else if (codec != native::Codec::kNone) {
      return fail(offset, "unknown chunk codec " + std::to_string(static_cast<int>(codec)));
    } else if (stored_size != raw_size) {
      return fail(offset, "uncompressed chunk with mismatching sizes");
    }
    visitor.on_chunk(result.chunks);
    std::string err = decoder->decode(reinterpret_cast<const uint8_t*>(payload), raw_size, items);
    if (!err.empty()) return fail(offset, err);
    visitor.on_chunk_done(result.chunks,
                          std::string_view(ch, native::kChunkHeaderSize + stored_size),
                          decoder->definitions(), decoder->definition_items());
    ++result.chunks;
    return true;
  }

  NativeVisitor& visitor;
  std::string name;
  NativeReadResult result;
  std::unique_ptr<Decoder> decoder;  // once the header is read
  std::string buf;                   // bytes not yet decoded start at pos
  size_t pos = 0;
  uint64_t offset = 0;  // stream offset of buf[pos]
  std::vector<char> raw;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  bool failed = false;
  bool finished = false;
  bool keep_definitions = false;
  bool convert_times = true;
};

NativeStreamReader::NativeStreamReader(NativeVisitor& visitor, std::string name)
    : s_(std::make_unique<State>(visitor, std::move(name))) {}

NativeStreamReader::~NativeStreamReader() = default;

bool NativeStreamReader::feed(const void* data, size_t size) {
  if (s_->failed) return false;
  s_->result.file_bytes += size;
  // Drop what is decoded before appending, so buf holds at most one
  // incomplete chunk plus the new piece.
  if (s_->pos > 0) {
    s_->buf.erase(0, s_->pos);
    s_->pos = 0;
  }
  s_->buf.append(static_cast<const char*>(data), size);
  return s_->consume();
}

void NativeStreamReader::keep_definitions(bool keep) {
  s_->keep_definitions = keep;
  if (s_->decoder) s_->decoder->keep_definitions(keep);
}

void NativeStreamReader::convert_times(bool convert) {
  s_->convert_times = convert;
  if (s_->decoder) s_->decoder->convert_times(convert);
}

const NativeReadResult& NativeStreamReader::finish() {
  State& s = *s_;
  if (s.failed || s.finished) return s.result;
  s.finished = true;
  if (!s.decoder) {
    s.fail(0, "not a sonde native log (bad magic)");
    return s.result;
  }
  const size_t left = s.buf.size() - s.pos;
  if (left > 0) {
    s.result.truncated = true;
    s.result.truncated_bytes = left;
  }
  s.result.ok = true;
  return s.result;
}

const NativeReadResult& NativeStreamReader::result() const { return s_->result; }

uint64_t NativeStreamReader::consumed() const { return s_->offset; }

bool NativeStreamReader::failed() const { return s_->failed; }

NativeReadResult read_native_file(const std::string& path, NativeVisitor& visitor) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    NativeReadResult r;
    r.error = "cannot open " + path + ": " + std::strerror(errno);
    return r;
  }
  NativeStreamReader reader(visitor, path);
  std::vector<char> block(1u << 20);
  for (;;) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    if (!reader.feed(block.data(), got)) return reader.result();
  }
  return reader.finish();
}

NativeReadResult read_native_bytes(std::string_view bytes, NativeVisitor& visitor,
                                   const std::string& name) {
  NativeStreamReader reader(visitor, name);
  if (!reader.feed(bytes.data(), bytes.size())) return reader.result();
  return reader.finish();
}

bool looks_like_native_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == 8 && std::string_view(magic, 8) == native::kFileMagic;
}

}  // namespace sonde::format
