// Kieker's string registry and its on-disk form, kieker.map (anchor §2.2).
// One registry serves a whole log directory or one TCP connection: record
// type ids and (.bin, TCP) string field values are ids into it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/log_reader.hpp"
#include "format/schema.hpp"
#include "format/string_pool.hpp"

namespace sonde::format::kieker {

// Escapes `\`, CR and LF so that Kieker's reader (FSUtil.decodeNewline)
// gives back the original value; Kieker's own writer omits this step.
std::string encode_map_value(std::string_view value);
// Undoes encode_map_value; unknown escapes and a trailing `\` stay as they are.
std::string decode_map_value(std::string_view text);
// Appends one kieker.map line, `$<id>=<encoded value>\n`.
void append_map_line(std::string& out, int32_t id, std::string_view value);

// The record type a type id stands for; schema is null when sonde has no
// built-in schema for the class.
struct KiekerType {
  std::string_view class_name;
  const RecordSchema* schema = nullptr;
  int payload_size = 0;  // schema->kieker_payload_size(), computed once
};

// Reading side: id -> string. Values are interned in the pool given at
// construction, which must outlive the registry and every record read.
class ReaderRegistry {
 public:
  using SchemaLookup = const RecordSchema* (*)(std::string_view class_name);
  // `lookup` maps class names to schemas; tests and callers with their own
  // record types can pass something other than the built-in table.
  explicit ReaderRegistry(StringPool& pool, SchemaLookup lookup = find_builtin_schema)
      : pool_(pool), lookup_(lookup) {}

  enum class AddResult { kAdded, kSame, kConflict };
  // Adds an entry. A second entry for an id keeps the first value: records
  // written before the duplicate line were written against it.
  AddResult add(int32_t id, std::string_view value);
  // Adds or replaces an entry (TCP: the latest registration wins).
  void set(int32_t id, std::string_view value);
  // Returns false if the id is not registered (or negative). Inline for
  // the dense ids: every string field of every record is looked up.
  bool find(int32_t id, std::string_view* value) const {
    const auto i = static_cast<size_t>(id);  // a negative id wraps past the end
    if (i < present_.size() && present_[i]) {
      *value = dense_[i];
      return true;
    }
    return find_sparse(id, value);
  }
  // The type a record header id stands for, or null if the id is unknown.
  const KiekerType* type(int32_t id);
  size_t size() const { return count_; }

 private:
  // Ids go to a vector while it stays at most twice as long as the number
  // of entries (or this minimum), so a stray huge id cannot allocate much.
  static constexpr size_t kDenseMin = 1 << 16;
  std::string_view* slot(int32_t id);
  const std::string_view* slot(int32_t id) const;
  bool find_sparse(int32_t id, std::string_view* value) const;

  StringPool& pool_;
  SchemaLookup lookup_;
  std::vector<std::string_view> dense_;
  std::vector<uint8_t> present_;
  std::unordered_map<int32_t, std::string_view> sparse_;
  std::unordered_map<int32_t, KiekerType> types_;
  // Direct-mapped cache in front of types_ (every record header is looked
  // up; the hash map cost 6 % of reading a .bin log). unordered_map nodes
  // do not move, so the pointers stay valid until set() erases the type.
  struct TypeCacheEntry {
    int32_t id = -1;
    const KiekerType* type = nullptr;
  };
  std::array<TypeCacheEntry, 64> type_cache_{};
  size_t count_ = 0;
};

// Writing side: string -> id, assigning 0, 1, 2, ... in first-use order as
// Kieker's WriterRegistry does. New entries are those with id >= a size()
// taken before encoding, so callers can emit them before the record.
class WriterRegistry {
 public:
  int32_t id(std::string_view s);
  int32_t size() const { return static_cast<int32_t>(by_id_.size()); }
  std::string_view value(int32_t id) const { return by_id_[static_cast<size_t>(id)]; }

 private:
  StringPool pool_;
  std::unordered_map<std::string_view, int32_t> ids_;
  std::vector<std::string_view> by_id_;
};

// Parses the text of a map file into `registry`. Empty lines are ignored;
// the `$` is optional; the value starts after the first `=`. Each malformed
// line or conflicting duplicate id appends an error naming `file` and the
// line number; parsing continues. Returns the number of entries added.
size_t parse_map_text(std::string_view text, std::string_view file, ReaderRegistry& registry,
                      std::vector<std::string>& errors);
// Reads and parses a map file. Returns false (with an error) if it cannot be read.
bool read_map_file(const std::string& path, ReaderRegistry& registry,
                   std::vector<std::string>& errors);

// Reporting shared by the .dat and .bin stream decoders: messages are
// prefixed with the file name, errors are capped per file so that a garbage
// file cannot flood memory, and unknown record classes give one warning per
// class with a count instead of one per record.
class FileReport {
 public:
  static constexpr size_t kMaxErrors = 100;

  FileReport(std::string file, LogReadStats& stats) : file_(std::move(file)), stats_(stats) {}
  const std::string& file() const { return file_; }
  LogReadStats& stats() { return stats_; }
  // `where` is a position such as "line 7" or "offset 120".
  void error(std::string_view where, std::string_view reason);
  void warning(std::string_view text);
  void unknown_class(std::string_view class_name);
  // Emits the per-class warnings and the count of errors beyond the cap.
  void finish();

 private:
  std::string file_;
  LogReadStats& stats_;
  size_t errors_ = 0;
  std::vector<std::pair<std::string, uint64_t>> unknown_;
};

}  // namespace sonde::format::kieker
