#include "format/native_writer.hpp"

#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#include "format/varint.hpp"

namespace sonde::format {

using native::EventKind;
using native::Tag;

namespace {

void put_u16(std::string& out, uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); }
void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put_f64(std::string& out, double v) { out.append(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

NativeWriter::NativeWriter(ByteSink& sink, NativeWriterOptions options)
    : sink_(sink), options_(options) {
  payload_.reserve(options_.chunk_target + (64u << 10));
  if (options_.codec == native::Codec::kZstd) zstd_ctx_ = ZSTD_createCCtx();
}

NativeWriter::~NativeWriter() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_)); }

std::string NativeWriter::file_header() {
  std::string header(native::kFileMagic);
  put_u16(header, native::kVersion);
  put_u16(header, 0);
  put_u32(header, 0);
  return header;
}

namespace {

std::string chunk_header(native::Codec codec, size_t raw_size, const char* stored,
                         size_t stored_size, uint32_t items) {
  std::string header;
  put_u32(header, native::kChunkMagic);
  header.push_back(static_cast<char>(codec));
  header.append(3, '\0');
  put_u32(header, static_cast<uint32_t>(raw_size));
  put_u32(header, static_cast<uint32_t>(stored_size));
  put_u32(header, items);
  put_u32(header, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(stored),
                                              static_cast<uInt>(stored_size))));
  return header;
}

}  // namespace

std::string NativeWriter::frame_chunk(std::string_view payload, uint32_t items) {
  std::string chunk =
      chunk_header(native::Codec::kNone, payload.size(), payload.data(), payload.size(), items);
  chunk.append(payload);
  return chunk;
}

bool NativeWriter::begin() {
  const std::string header = file_header();
  if (!sink_.write(header.data(), header.size())) {
    failed_ = true;
    error_ = sink_.error();
    return false;
  }
  bytes_written_ += header.size();
  return true;
}

uint32_t NativeWriter::string_id(std::string_view s) {
  // Looked up by view first: nearly every call finds a string already
  // interned, and building a std::string key for it (a malloc and free for
  // any signature past 15 characters) cost more than the lookup.
  if (const uint32_t* hit = string_cache_.find(s)) return *hit;
  if (auto found = strings_.find(s); found != strings_.end()) {
    string_cache_.put(s, found->first, found->second);
    return found->second;
  }
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  const auto added = strings_.emplace(std::string(s), id).first;
  string_cache_.put(s, added->first, id);
  const size_t start = payload_.size();
  item(Tag::kString);
  put_varint(payload_, id);
  put_str(payload_, s);
  remember(start);
  return id;
}

void NativeWriter::meta(std::string_view key, std::string_view value) {
  const size_t start = payload_.size();
  item(Tag::kMeta);
  put_str(payload_, key);
  put_str(payload_, value);
  remember(start);
}

void NativeWriter::thread(uint32_t index, uint64_t os_tid, std::string_view name) {
  const size_t start = payload_.size();
  item(Tag::kThread);
  put_varint(payload_, index);
  put_varint(payload_, os_tid);
  put_str(payload_, name);
  remember(start);
}

void NativeWriter::operation(uint32_t id, std::string_view name, native::OperationKind kind,
                             std::string_view module, uint64_t address, std::string_view file,
                             uint32_t line) {
  uint32_t name_id = string_id(name);
  uint32_t module_id = string_id(module);
  uint32_t file_id = string_id(file);
  const size_t start = payload_.size();
  item(Tag::kOperation);
  put_varint(payload_, id);
  put_varint(payload_, name_id);
  payload_.push_back(static_cast<char>(kind));
  put_varint(payload_, module_id);
  put_varint(payload_, address);
  put_varint(payload_, file_id);
  put_varint(payload_, line);
  remember(start);
}

void NativeWriter::clock(uint64_t tsc, int64_t epoch_ns, double ns_per_tick) {
  const size_t start = payload_.size();
  item(Tag::kClock);
  put_varint(payload_, tsc);
  put_varint(payload_, zigzag(epoch_ns));
  put_f64(payload_, ns_per_tick);
  remember(start);
}

void NativeWriter::loss(uint32_t thread, uint64_t events, std::string_view reason) {
  uint32_t reason_id = string_id(reason);
  item(Tag::kLoss);
  put_varint(payload_, thread);
  put_varint(payload_, events);
  put_varint(payload_, reason_id);
}

uint32_t NativeWriter::schema_id(const RecordSchema& schema) {
  if (const uint32_t* hit = recent_schemas_.find(schema.serial)) return *hit;
  auto it = schemas_.find(schema.serial);
  if (it != schemas_.end()) {
    recent_schemas_.put(schema.serial, it->second);
    return it->second;
  }
  uint32_t id = static_cast<uint32_t>(schemas_.size());
  schemas_.emplace(schema.serial, id);
  recent_schemas_.put(schema.serial, id);
  uint32_t class_id = string_id(schema.class_name);
  std::vector<uint32_t> name_ids;
  for (const FieldSpec& f : schema.fields) name_ids.push_back(string_id(f.name));
  const size_t start = payload_.size();
  item(Tag::kSchema);
  put_varint(payload_, id);
  put_varint(payload_, class_id);
  put_varint(payload_, schema.fields.size());
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    payload_.push_back(static_cast<char>(schema.fields[i].type));
    put_varint(payload_, name_ids[i]);
  }
  remember(start);
  return id;
}

void NativeWriter::record(const Record& r) {
  const uint32_t sid = schema_id(*r.schema);
  // Intern the strings first: STRING items must precede the record using
  // them. Meanwhile bound the record's size: every field is at most one
  // varint (an f64 is 8 bytes, a bool 1), a string array one per element
  // more.
  record_string_ids_.clear();
  size_t max_bytes = 2 * kMaxVarintBytes;  // schema id, logging timestamp
  for (const Value& v : r.values) {
    max_bytes += kMaxVarintBytes;
    if (auto* s = std::get_if<std::string_view>(&v)) {
      record_string_ids_.push_back(string_id(*s));
    } else if (auto* a = std::get_if<std::vector<std::string_view>>(&v)) {
      for (std::string_view e : *a) record_string_ids_.push_back(string_id(e));
      max_bytes += kMaxVarintBytes * a->size();
    }
  }
  item(Tag::kRecord);
  // Encoded through a pointer into room made once, as the events are
  // (grow_block): an append per varint was the largest entry of the
  // collector's profile on Kieker's protocol, whose records all pass here.
  const size_t start = payload_.size();
  payload_.resize(start + max_bytes);
  char* p = payload_.data() + start;
  p = put_varint_raw(p, sid);
  p = put_varint_raw(p, zigzag(r.logging_timestamp));
  size_t next_id = 0;
  for (size_t i = 0; i < r.values.size(); ++i) {
    const Value& v = r.values[i];
    switch (r.schema->fields[i].type) {
      case FieldType::kDouble:
      case FieldType::kFloat: {
        const double d = std::get<double>(v);
        std::memcpy(p, &d, 8);
        p += 8;
        break;
      }
      case FieldType::kBool:
        *p++ = std::get<bool>(v) ? 1 : 0;
        break;
      case FieldType::kString:
        // A value of another type throws here, as the other fields do,
        // instead of taking a stale id from the reused vector.
        (void)std::get<std::string_view>(v);
        p = put_varint_raw(p, record_string_ids_[next_id++]);
        break;
      case FieldType::kStringArray: {
        const auto& a = std::get<std::vector<std::string_view>>(v);
        p = put_varint_raw(p, a.size());
        for (size_t k = 0; k < a.size(); ++k) p = put_varint_raw(p, record_string_ids_[next_id++]);
        break;
      }
      default:
        p = put_varint_raw(p, zigzag(std::get<int64_t>(v)));
        break;
    }
  }
  assert(p <= payload_.data() + start + max_bytes);
  payload_.resize(static_cast<size_t>(p - payload_.data()));
}

void NativeWriter::grow_block(size_t events) {
  auto grow = [](std::string& block, char*& pos, char*& end, size_t bytes) {
    size_t used = static_cast<size_t>(pos - block.data());
    if (block.size() - used >= bytes) return;
    block.resize(std::max(block.size() * 2, used + bytes + 4096));
    pos = block.data() + used;
    end = block.data() + block.size();
  };
  grow(time_block_, cursor_.t_, time_end_, events * kMaxTimeBytes);
  grow(event_block_, cursor_.e_, event_end_, events * kMaxEventBytes);
}

void NativeWriter::begin_events(uint32_t thread, uint64_t base_tsc) {
  cursor_.t_ = time_block_.data();
  cursor_.e_ = event_block_.data();
  cursor_.last_tsc_ = base_tsc;
  cursor_.count_ = 0;
  cursor_.markers_ = 0;
  cursor_.last_trace_ = 0;
  time_end_ = time_block_.data() + time_block_.size();
  event_end_ = event_block_.data() + event_block_.size();
  block_thread_ = thread;
  block_base_tsc_ = base_tsc;
  block_open_ = true;
}

void NativeWriter::end_events() {
  if (!block_open_) return;
  block_open_ = false;
  if (cursor_.count_ == 0) return;
  chunk_probe_events_ += cursor_.count_ - cursor_.markers_;
  auto time_bytes = static_cast<size_t>(cursor_.t_ - time_block_.data());
  item(Tag::kEvents);
  put_varint(payload_, block_thread_);
  put_varint(payload_, cursor_.count_);
  put_varint(payload_, block_base_tsc_);
  put_varint(payload_, time_bytes);
  payload_.append(time_block_.data(), time_bytes);
  payload_.append(event_block_.data(), static_cast<size_t>(cursor_.e_ - event_block_.data()));
}

bool NativeWriter::flush(bool force) {
  if (failed_) return false;
  if (payload_.empty()) return true;
  if (!force && (options_.manual_flush || payload_.size() < options_.chunk_target)) return true;
  return write_chunk();
}

bool NativeWriter::finish(uint64_t events_written, uint64_t events_lost) {
  end_events();
  item(Tag::kEnd);
  put_varint(payload_, events_written);
  put_varint(payload_, events_lost);
  bool ok = flush(true);
  if (ok && !sink_.sync()) {
    failed_ = true;
    error_ = sink_.error();
    return false;
  }
  return ok;
}

bool NativeWriter::write_chunk() {
  const char* stored = payload_.data();
  size_t stored_size = payload_.size();
  native::Codec codec = options_.codec;
  if (codec == native::Codec::kZstd) {
    compressed_.resize(ZSTD_compressBound(payload_.size()));
    size_t n =
        ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_), compressed_.data(),
                          compressed_.size(), payload_.data(), payload_.size(), options_.level);
    if (ZSTD_isError(n)) {
      codec = native::Codec::kNone;  // store raw rather than lose the chunk
    } else {
      stored = compressed_.data();
      stored_size = n;
    }
  } else if (codec == native::Codec::kLz4) {
    compressed_.resize(LZ4_compressBound(static_cast<int>(payload_.size())));
    int n =
        LZ4_compress_fast(payload_.data(), compressed_.data(), static_cast<int>(payload_.size()),
                          static_cast<int>(compressed_.size()), std::max(1, options_.level));
    if (n <= 0) {
      codec = native::Codec::kNone;
    } else {
      stored = compressed_.data();
      stored_size = static_cast<size_t>(n);
    }
  }
  const std::string header = chunk_header(codec, payload_.size(), stored, stored_size, items_);
  if (!sink_.write(header.data(), header.size()) || !sink_.write(stored, stored_size)) {
    failed_ = true;
    error_ = sink_.error();
    return false;
  }
  bytes_written_ += header.size() + stored_size;
  ++chunks_;
  payload_.clear();
  items_ = 0;
  sink_.end_chunk({chunk_probe_events_, dictionary_.size(), dictionary_items_});
  chunk_probe_events_ = 0;
  return true;
}

}  // namespace sonde::format
