#include "format/kieker_bin.hpp"

#include <bit>
#include <cstring>
#include <type_traits>

namespace sonde::format::kieker {
namespace {

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 8, uint64_t,
                                std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;

template <typename T>
void put_be(std::string& out, T v) {
  auto u = std::bit_cast<Bits<T>>(v);
  char b[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<char>(u >> (8 * (sizeof(T) - 1 - i)));
  out.append(b, sizeof(T));
}

template <typename T>
T get_be(const char* p) {
  Bits<T> u;
  std::memcpy(&u, p, sizeof u);
  if constexpr (std::endian::native == std::endian::little && sizeof(T) > 1) {
    if constexpr (sizeof(T) == 2) u = __builtin_bswap16(u);
    if constexpr (sizeof(T) == 4) u = __builtin_bswap32(u);
    if constexpr (sizeof(T) == 8) u = __builtin_bswap64(u);
  }
  return std::bit_cast<T>(u);
}

}  // namespace

void encode_bin_record(const Record& r, int32_t type_id, WriterRegistry& strings,
                       std::string& out) {
  put_be<int32_t>(out, type_id);
  put_be<int64_t>(out, r.logging_timestamp);
  const auto& fields = r.schema->fields;
  for (size_t i = 0; i < fields.size() && i < r.values.size(); ++i) {
    const Value& v = r.values[i];
    switch (fields[i].type) {
      case FieldType::kInt32:
        put_be<int32_t>(out, static_cast<int32_t>(value_or<int64_t>(v, 0)));
        break;
      case FieldType::kInt64:
        put_be<int64_t>(out, value_or<int64_t>(v, 0));
        break;
      case FieldType::kShort:
        put_be<int16_t>(out, static_cast<int16_t>(value_or<int64_t>(v, 0)));
        break;
      case FieldType::kChar:
        put_be<uint16_t>(out, static_cast<uint16_t>(value_or<int64_t>(v, 0)));
        break;
      case FieldType::kByte:
        out += static_cast<char>(value_or<int64_t>(v, 0));
        break;
      case FieldType::kBool:
        out += static_cast<char>(value_or<bool>(v, false) ? 1 : 0);
        break;
      case FieldType::kDouble:
        put_be<double>(out, value_or<double>(v, 0));
        break;
      case FieldType::kFloat:
        put_be<float>(out, static_cast<float>(value_or<double>(v, 0)));
        break;
      case FieldType::kString:
        put_be<int32_t>(out, strings.id(value_or<std::string_view>(v, {})));
        break;
      case FieldType::kStringArray: {
        const auto* items = std::get_if<std::vector<std::string_view>>(&v);
        put_be<int32_t>(out, items ? static_cast<int32_t>(items->size()) : 0);
        if (items == nullptr) break;
        for (std::string_view s : *items) put_be<int32_t>(out, strings.id(s));
        break;
      }
    }
  }
}

BinStatus decode_bin_record(std::string_view data, ReaderRegistry& registry, Record& out,
                            size_t* size, std::string* detail) {
  const char* p = data.data();
  const size_t n = data.size();
  if (n < 4) {
    *size = 12;
    return BinStatus::kNeedMore;
  }
  const int32_t type_id = get_be<int32_t>(p);
  const KiekerType* type = registry.type(type_id);
  if (type == nullptr) {
    *detail = "type id " + std::to_string(type_id) + " is not in the string registry";
    *size = 4;
    return BinStatus::kUnknownTypeId;
  }
  if (type->schema == nullptr) {
    *detail = std::string(type->class_name);
    *size = 12;
    return BinStatus::kUnknownClass;
  }
  const RecordSchema& schema = *type->schema;
  size_t pos = 12;
  // Fixed-size bytes of the fields not yet read: the least the rest needs.
  auto rest = static_cast<size_t>(type->payload_size);
  if (n < pos + rest) {
    *size = pos + rest;
    return BinStatus::kNeedMore;
  }
  out.schema = &schema;
  out.logging_timestamp = get_be<int64_t>(p + 4);
  out.values.resize(schema.fields.size());
  int64_t bad_string = -1;
  auto string_at = [&](size_t at) {
    int32_t id = get_be<int32_t>(p + at);
    std::string_view s;
    if (!registry.find(id, &s) && bad_string < 0) bad_string = id;
    return s;
  };
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const FieldType t = schema.fields[i].type;
    // Arrays before this field may have moved it past the end of the data.
    if (pos + rest > n) {
      *size = pos + rest;
      return BinStatus::kNeedMore;
    }
    const auto fixed = static_cast<size_t>(kieker_binary_size(t));
    rest -= fixed;
    Value& v = out.values[i];
    switch (t) {
      case FieldType::kInt32:
        v = int64_t{get_be<int32_t>(p + pos)};
        break;
      case FieldType::kInt64:
        v = get_be<int64_t>(p + pos);
        break;
      case FieldType::kShort:
        v = int64_t{get_be<int16_t>(p + pos)};
        break;
      case FieldType::kChar:
        v = int64_t{get_be<uint16_t>(p + pos)};
        break;
      case FieldType::kByte:
        v = int64_t{static_cast<int8_t>(p[pos])};
        break;
      case FieldType::kBool:
        v = p[pos] == 1;  // as Kieker's BinaryValueDeserializer
        break;
      case FieldType::kDouble:
        v = get_be<double>(p + pos);
        break;
      case FieldType::kFloat:
        v = static_cast<double>(get_be<float>(p + pos));
        break;
      case FieldType::kString:
        v = string_at(pos);
        break;
      case FieldType::kStringArray: {
        const int32_t count = get_be<int32_t>(p + pos);
        if (count < 0) {
          *detail = "record " + schema.class_name + ": array '" + schema.fields[i].name +
                    "' has negative length " + std::to_string(count);
          return BinStatus::kBadArray;
        }
        const size_t need = pos + 4 + 4 * static_cast<size_t>(count) + rest;
        if (need > n) {
          *size = need;
          return BinStatus::kNeedMore;
        }
        auto* items = std::get_if<std::vector<std::string_view>>(&v);
        if (items == nullptr) {
          v = std::vector<std::string_view>();
          items = std::get_if<std::vector<std::string_view>>(&v);
        }
        items->clear();
        for (int32_t k = 0; k < count; ++k) items->push_back(string_at(pos + 4 + 4 * size_t(k)));
        pos += 4 * static_cast<size_t>(count);
        break;
      }
    }
    pos += fixed;
  }
  *size = pos;
  if (bad_string >= 0) {
    *detail = "record " + schema.class_name + ": string id " + std::to_string(bad_string) +
              " is not in the string registry";
    return BinStatus::kBadString;
  }
  return BinStatus::kOk;
}

void BinStreamDecoder::halt(std::string message, bool is_error) {
  halted_ = true;
  halt_is_error_ = is_error;
  halt_message_ = std::move(message);
  halt_offset_ = base_offset_ + pos_;
  unread_ = buf_.size() - pos_;
  ++report_.stats().skipped;
  buf_.clear();
  pos_ = 0;
}

bool BinStreamDecoder::feed(std::string_view chunk) {
  if (stopped_) return false;
  if (halted_) {
    unread_ += chunk.size();
    return true;
  }
  buf_.append(chunk);
  LogReadStats& stats = report_.stats();
  while (!halted_ && pos_ < buf_.size()) {
    std::string_view view(buf_.data() + pos_, buf_.size() - pos_);
    size_t size = 0;
    BinStatus status = decode_bin_record(view, registry_, record_, &size, &detail_);
    if (status == BinStatus::kNeedMore) break;
    // Only error paths need the position as text: not built per record.
    const auto at = [&] { return "offset " + std::to_string(base_offset_ + pos_); };
    constexpr std::string_view kNoLength =
        "; .bin records carry no length, so the rest of the file cannot be read";
    switch (status) {
      case BinStatus::kOk:
        pos_ += size;
        ++stats.records;
        if (!sink_.on_record(record_)) stopped_ = true;
        break;
      case BinStatus::kBadString:
        report_.error(at(), detail_ + "; record skipped");
        pos_ += size;
        ++stats.skipped;
        break;
      case BinStatus::kUnknownClass:
        halt("record type " + detail_ + " has no built-in schema" + std::string(kNoLength), false);
        break;
      case BinStatus::kUnknownTypeId:
      case BinStatus::kBadArray:
        halt(detail_ + std::string(kNoLength), true);
        break;
      case BinStatus::kNeedMore:
        break;
    }
    if (stopped_) return false;
  }
  base_offset_ += pos_;
  buf_.erase(0, pos_);
  pos_ = 0;
  return true;
}

bool BinStreamDecoder::finish() {
  if (halted_) {
    std::string at = "offset " + std::to_string(halt_offset_);
    std::string text = halt_message_ + " (" + std::to_string(unread_) + " bytes not read)";
    if (halt_is_error_) {
      report_.error(at, text);
    } else {
      report_.warning(at + ": " + text);
    }
  } else if (!stopped_ && pos_ < buf_.size()) {
    size_t need = 0;
    std::string_view view(buf_.data() + pos_, buf_.size() - pos_);
    decode_bin_record(view, registry_, record_, &need, &detail_);
    ++report_.stats().skipped;
    report_.warning("offset " + std::to_string(base_offset_ + pos_) +
                    ": file ends inside a record (" + std::to_string(view.size()) +
                    " bytes present, at least " + std::to_string(need) + " needed)");
  }
  buf_.clear();
  pos_ = 0;
  report_.finish();
  return !stopped_;
}

}  // namespace sonde::format::kieker
