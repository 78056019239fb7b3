// Kieker's .dat text records, both ways. Over 500 lines: Java's notation
// for numbers, characters and strings must be written and parsed by the
// same rules (a record must read back as Kieker wrote it), so both
// directions sit together.
#include "format/kieker_dat.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace sonde::format::kieker {
namespace {

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Splits to_chars' scientific form "d.ddde+XX" into significant digits
// (without trailing zeros) and the decimal exponent of the first digit.
void split_scientific(std::string_view s, std::string& digits, int& exp) {
  size_t e = s.find('e');
  digits.clear();
  for (char c : s.substr(0, e)) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string_view x = s.substr(e + 1);
  if (!x.empty() && x.front() == '+') x.remove_prefix(1);
  std::from_chars(x.data(), x.data() + x.size(), exp);
}

// Java switches to "computerized scientific notation" outside [1e-3, 1e7).
void append_java_notation(std::string& out, std::string_view digits, int exp) {
  if (exp >= -3 && exp < 7) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
      return;
    }
    auto int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out += digits;
      out.append(int_len - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, int_len);
      out += '.';
      out += digits.substr(int_len);
    }
    return;
  }
  out += digits[0];
  out += '.';
  out += digits.size() > 1 ? digits.substr(1) : std::string_view("0");
  out += 'E';
  append_int(out, exp);
}

template <typename F>
void append_java_fp(std::string& out, F v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-Infinity" : "Infinity";
    return;
  }
  if (v == 0) {
    out += std::signbit(v) ? "-0.0" : "0.0";
    return;
  }
  if (v < 0) {
    out += '-';
    v = -v;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string digits;
  int exp = 0;
  split_scientific(std::string_view(buf, static_cast<size_t>(r.ptr - buf)), digits, exp);
  if (digits.size() == 1) {
    // Java (JDK 19+) prefers a 2-digit decimal that is closer to the value
    // over a 1-digit one (4.9E-324, not 5.0E-324), when it still round-trips.
    char buf2[64];
    auto r2 = std::to_chars(buf2, buf2 + sizeof buf2, v, std::chars_format::scientific, 1);
    std::string d2;
    int e2 = 0;
    split_scientific(std::string_view(buf2, static_cast<size_t>(r2.ptr - buf2)), d2, e2);
    F back{};
    std::from_chars(buf2, r2.ptr, back, std::chars_format::scientific);
    if (d2.size() == 2 && back == v) {
      digits = d2;
      exp = e2;
    }
  }
  append_java_notation(out, digits, exp);
}

template <typename F>
bool parse_java_fp(std::string_view s, F* out) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  if (!s.empty() && (s.back() == 'd' || s.back() == 'D' || s.back() == 'f' || s.back() == 'F')) {
    s.remove_suffix(1);
  }
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  F v{};
  if (s == "NaN") {
    v = std::numeric_limits<F>::quiet_NaN();
  } else if (s == "Infinity") {
    v = std::numeric_limits<F>::infinity();
  } else {
    // from_chars also takes "inf"/"nan" spellings, which Java rejects.
    if (s.empty() || !(s.front() == '.' || (s.front() >= '0' && s.front() <= '9'))) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    // Out-of-range input: Java gives infinity or zero rather than failing.
    if (ec == std::errc::result_out_of_range) {
      double d = std::strtod(std::string(s).c_str(), nullptr);
      v = static_cast<F>(d);
    } else if (ec != std::errc() || end != s.data() + s.size()) {
      return false;
    }
  }
  *out = negative ? -v : v;
  return true;
}

template <typename I>
bool parse_java_int(std::string_view s, int64_t* out) {
  if (s.size() > 1 && s.front() == '+' && s[1] != '-') s.remove_prefix(1);
  I v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return false;
  *out = v;
  return true;
}

// Returns true if the string had to be altered.
bool append_dat_string(std::string& out, std::string_view s) {
  bool altered = false;
  const size_t start = out.size();
  out.append(s);
  for (size_t i = start; i < out.size(); ++i) {
    const char c = out[i];
    if (c == ';' || c == '\r' || c == '\n') {
      out[i] = kDatSubstitute;
      altered = true;
    }
  }
  // Kieker's reader pairs each `\` with the next character, so an odd run of
  // trailing backslashes would swallow the field separator.
  size_t run = 0;
  while (run < out.size() - start && out[out.size() - 1 - run] == '\\') ++run;
  if (run % 2 == 1) {
    out.back() = kDatSubstitute;
    altered = true;
  }
  return altered;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A Java char is one UTF-16 unit, written as itself.
bool append_dat_char(std::string& out, int64_t c) {
  bool bad =
      c < 0 || c > 0xFFFF || (c >= 0xD800 && c <= 0xDFFF) || c == ';' || c == '\r' || c == '\n';
  if (bad) {
    out += kDatSubstitute;
    return true;
  }
  append_utf8(out, static_cast<uint32_t>(c));
  return false;
}

}  // namespace

void append_java_double(std::string& out, double v) { append_java_fp(out, v); }
void append_java_float(std::string& out, float v) { append_java_fp(out, v); }
bool parse_java_double(std::string_view s, double* out) { return parse_java_fp(s, out); }
bool parse_java_float(std::string_view s, float* out) { return parse_java_fp(s, out); }

size_t encode_dat_line(const Record& r, int32_t type_id, std::string& out) {
  size_t altered = 0;
  out += '$';
  append_int(out, type_id);
  out += ';';
  append_int(out, r.logging_timestamp);
  const auto& fields = r.schema->fields;
  for (size_t i = 0; i < fields.size() && i < r.values.size(); ++i) {
    const Value& v = r.values[i];
    out += ';';
    switch (fields[i].type) {
      case FieldType::kInt32:
        append_int(out, static_cast<int32_t>(value_or<int64_t>(v, 0)));
        break;
      case FieldType::kInt64:
        append_int(out, value_or<int64_t>(v, 0));
        break;
      case FieldType::kShort:
        append_int(out, static_cast<int16_t>(value_or<int64_t>(v, 0)));
        break;
      case FieldType::kByte:
        append_int(out, static_cast<int8_t>(value_or<int64_t>(v, 0)));
        break;
      case FieldType::kChar:
        altered += append_dat_char(out, value_or<int64_t>(v, 0));
        break;
      case FieldType::kDouble:
        append_java_double(out, value_or<double>(v, 0));
        break;
      case FieldType::kFloat:
        append_java_float(out, static_cast<float>(value_or<double>(v, 0)));
        break;
      case FieldType::kBool:
        out += value_or<bool>(v, false) ? "true" : "false";
        break;
      case FieldType::kString:
        altered += append_dat_string(out, value_or<std::string_view>(v, {}));
        break;
      case FieldType::kStringArray: {
        const auto* items = std::get_if<std::vector<std::string_view>>(&v);
        append_int(out, items ? static_cast<int64_t>(items->size()) : 0);
        if (items == nullptr) break;
        for (std::string_view s : *items) {
          out += ';';
          altered += append_dat_string(out, s);
        }
        break;
      }
    }
  }
  out += '\n';
  return altered;
}

namespace {

// Mirrors Kieker's TextValueDeserializer: fields end at `;`, and a `\`
// takes the next character with it verbatim (the pair stays in the value).
class LineCursor {
 public:
  explicit LineCursor(std::string_view s) : s_(s), pos_(1) {}  // after the '$'
  bool more() const { return more_; }
  std::string_view rest() const { return s_.substr(pos_); }

  std::string_view value() {
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\\') {
        pos_ += pos_ + 1 < s_.size() ? 2 : 1;
      } else if (c == ';') {
        std::string_view v = s_.substr(start, pos_ - start);
        ++pos_;
        more_ = true;
        return v;
      } else {
        ++pos_;
      }
    }
    more_ = false;
    return s_.substr(start);
  }

  // Kieker reads a char as exactly one character followed by the separator.
  bool character(int64_t* out) {
    if (pos_ >= s_.size()) return false;
    auto lead = static_cast<unsigned char>(s_[pos_]);
    size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : 1;
    if (pos_ + len > s_.size()) len = 1;
    uint32_t cp = len == 1 ? lead : len == 2 ? (lead & 0x1F) : (lead & 0x0F);
    for (size_t i = 1; i < len; ++i)
      cp = (cp << 6) | (static_cast<unsigned char>(s_[pos_ + i]) & 0x3F);
    pos_ += len;
    if (pos_ == s_.size()) {
      more_ = false;
    } else if (s_[pos_] == ';') {
      ++pos_;
      more_ = true;
    } else {
      return false;
    }
    *out = cp;
    return true;
  }

 private:
  std::string_view s_;
  size_t pos_;
  bool more_ = true;
};

std::string quoted(std::string_view s) {
  constexpr size_t kMax = 60;
  return "'" + std::string(s.substr(0, kMax)) + (s.size() > kMax ? "...'" : "'");
}

bool parse_number(FieldType t, std::string_view s, Value& out) {
  int64_t i = 0;
  bool ok = false;
  switch (t) {
    case FieldType::kInt32:
      ok = parse_java_int<int32_t>(s, &i);
      break;
    case FieldType::kInt64:
      ok = parse_java_int<int64_t>(s, &i);
      break;
    case FieldType::kShort:
      ok = parse_java_int<int16_t>(s, &i);
      break;
    case FieldType::kByte:
      ok = parse_java_int<int8_t>(s, &i);
      break;
    case FieldType::kDouble: {
      double d = 0;
      if (!parse_java_double(s, &d)) return false;
      out = d;
      return true;
    }
    case FieldType::kFloat: {
      float f = 0;
      if (!parse_java_float(s, &f)) return false;
      out = static_cast<double>(f);
      return true;
    }
    case FieldType::kBool: {
      // Boolean.parseBoolean ignores case; anything but true/false is an error here.
      auto eq = [&](std::string_view w) {
        if (s.size() != w.size()) return false;
        for (size_t k = 0; k < s.size(); ++k) {
          if ((s[k] | 0x20) != w[k]) return false;
        }
        return true;
      };
      if (!eq("true") && !eq("false")) return false;
      out = eq("true");
      return true;
    }
    default:
      return false;
  }
  if (ok) out = i;
  return ok;
}

}  // namespace

DatStatus decode_dat_line(std::string_view line, ReaderRegistry& registry, StringPool& pool,
                          Record& out, std::string* detail) {
  auto malformed = [&](std::string why) {
    *detail = std::move(why);
    return DatStatus::kMalformed;
  };
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line.front() != '$') return malformed("line does not start with '$'");

  LineCursor c(line);
  std::string_view id_text = c.value();
  int64_t id = 0;
  if (!parse_java_int<int32_t>(id_text, &id)) return malformed("bad type id " + quoted(id_text));
  const KiekerType* type = registry.type(static_cast<int32_t>(id));
  if (type == nullptr) {
    *detail = "type id " + std::to_string(id) + " is not in the map file";
    return DatStatus::kUnknownTypeId;
  }
  if (!c.more()) return malformed("missing logging timestamp");
  std::string_view ts_text = c.value();
  int64_t ts = 0;
  if (!parse_java_int<int64_t>(ts_text, &ts)) {
    return malformed("bad logging timestamp " + quoted(ts_text));
  }
  if (type->schema == nullptr) {
    *detail = std::string(type->class_name);
    return DatStatus::kUnknownClass;
  }

  const RecordSchema& schema = *type->schema;
  out.schema = &schema;
  out.logging_timestamp = ts;
  out.values.resize(schema.fields.size());
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const FieldSpec& f = schema.fields[i];
    auto bad = [&](std::string_view text) {
      return malformed("field '" + f.name + "' (" + std::string(to_string(f.type)) +
                       "): " + quoted(text) + " is not a valid value");
    };
    if (!c.more()) {
      return malformed("line ends before field '" + f.name + "' (" + std::to_string(i + 1) +
                       " of " + std::to_string(schema.fields.size()) + ")");
    }
    switch (f.type) {
      case FieldType::kString:
        out.values[i] = pool.intern(c.value());
        break;
      case FieldType::kChar: {
        int64_t ch = 0;
        if (!c.character(&ch)) return bad(c.rest());
        out.values[i] = ch;
        break;
      }
      case FieldType::kStringArray: {
        std::string_view count_text = c.value();
        int64_t count = 0;
        if (!parse_java_int<int32_t>(count_text, &count) || count < 0) return bad(count_text);
        if (count > static_cast<int64_t>(line.size())) return bad(count_text);
        auto* items = std::get_if<std::vector<std::string_view>>(&out.values[i]);
        if (items == nullptr) {
          out.values[i] = std::vector<std::string_view>();
          items = std::get_if<std::vector<std::string_view>>(&out.values[i]);
        }
        items->clear();
        for (int64_t k = 0; k < count; ++k) {
          if (!c.more()) {
            return malformed("line ends inside array '" + f.name + "' (element " +
                             std::to_string(k + 1) + " of " + std::to_string(count) + ")");
          }
          items->push_back(pool.intern(c.value()));
        }
        break;
      }
      default: {
        std::string_view text = c.value();
        if (!parse_number(f.type, text, out.values[i])) return bad(text);
      }
    }
  }
  if (c.more()) return malformed("unexpected data after the last field: " + quoted(c.rest()));
  return DatStatus::kOk;
}

bool DatStreamDecoder::feed(std::string_view chunk) {
  while (!stopped_ && !chunk.empty()) {
    const size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    chunk.remove_prefix(nl == std::string_view::npos ? chunk.size() : nl + 1);
    if (!overlong_ && partial_.size() + piece.size() > kMaxDatLine) {
      // Not a .dat line (binary data?): skip to the next newline, report once.
      overlong_ = true;
      partial_.clear();
      ++report_.stats().skipped;
      report_.error("line " + std::to_string(line_no_ + 1),
                    "longer than " + std::to_string(kMaxDatLine) + " bytes; skipped");
    }
    if (nl == std::string_view::npos) {
      if (!overlong_) partial_.append(piece);
      return true;
    }
    if (overlong_) {
      ++line_no_;
      overlong_ = false;
    } else if (partial_.empty()) {
      line(piece, false);
    } else {
      partial_.append(piece);
      line(partial_, false);
      partial_.clear();
    }
  }
  return !stopped_;
}

bool DatStreamDecoder::finish() {
  if (!stopped_ && !partial_.empty() && !overlong_) line(partial_, true);
  partial_.clear();
  report_.finish();
  return !stopped_;
}

bool DatStreamDecoder::line(std::string_view text, bool unterminated) {
  ++line_no_;
  if (text.empty() || text == "\r") return true;
  LogReadStats& stats = report_.stats();
  switch (decode_dat_line(text, registry_, pool_, record_, &detail_)) {
    case DatStatus::kOk:
      ++stats.records;
      if (!sink_.on_record(record_)) stopped_ = true;
      break;
    case DatStatus::kUnknownClass:
      report_.unknown_class(detail_);
      break;
    case DatStatus::kMalformed:
      if (unterminated) {
        // A last line without its newline is what a killed writer leaves.
        ++stats.skipped;
        report_.warning("line " + std::to_string(line_no_) +
                        ": file ends inside a line (truncated): " + detail_);
        break;
      }
      [[fallthrough]];
    case DatStatus::kUnknownTypeId:
      ++stats.skipped;
      report_.error("line " + std::to_string(line_no_), detail_);
      break;
  }
  return !stopped_;
}

}  // namespace sonde::format::kieker
