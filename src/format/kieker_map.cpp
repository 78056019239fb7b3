#include "format/kieker_map.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace sonde::format::kieker {

std::string encode_map_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string decode_map_value(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\\' || i + 1 == text.size()) {
      out += c;
      continue;
    }
    char d = text[++i];
    switch (d) {
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      default:  // Kieker keeps unknown escapes verbatim
        out += c;
        out += d;
    }
  }
  return out;
}

void append_map_line(std::string& out, int32_t id, std::string_view value) {
  out += '$';
  out += std::to_string(id);
  out += '=';
  out += encode_map_value(value);
  out += '\n';
}

std::string_view* ReaderRegistry::slot(int32_t id) {
  return const_cast<std::string_view*>(std::as_const(*this).slot(id));
}

const std::string_view* ReaderRegistry::slot(int32_t id) const {
  if (id < 0) return nullptr;
  auto i = static_cast<size_t>(id);
  if (i < present_.size() && present_[i]) return &dense_[i];
  auto it = sparse_.find(id);
  return it == sparse_.end() ? nullptr : &it->second;
}

ReaderRegistry::AddResult ReaderRegistry::add(int32_t id, std::string_view value) {
  if (const std::string_view* old = slot(id)) {
    return *old == value ? AddResult::kSame : AddResult::kConflict;
  }
  set(id, value);
  return AddResult::kAdded;
}

void ReaderRegistry::set(int32_t id, std::string_view value) {
  if (id < 0) return;
  std::string_view stored = pool_.intern(value);
  types_.erase(id);
  type_cache_[static_cast<uint32_t>(id) % type_cache_.size()] = {};
  if (std::string_view* old = slot(id)) {
    *old = stored;
    return;
  }
  ++count_;
  auto i = static_cast<size_t>(id);
  if (i >= dense_.size() && i >= std::max(kDenseMin, 2 * count_)) {
    sparse_[id] = stored;
    return;
  }
  if (i >= dense_.size()) {
    dense_.resize(i + 1);
    present_.resize(i + 1, 0);
  }
  dense_[i] = stored;
  present_[i] = 1;
}

bool ReaderRegistry::find_sparse(int32_t id, std::string_view* value) const {
  const std::string_view* s = slot(id);
  if (s == nullptr) return false;
  *value = *s;
  return true;
}

const KiekerType* ReaderRegistry::type(int32_t id) {
  TypeCacheEntry& cached = type_cache_[static_cast<uint32_t>(id) % type_cache_.size()];
  if (cached.id == id && cached.type != nullptr) return cached.type;
  const KiekerType* found = nullptr;
  if (auto it = types_.find(id); it != types_.end()) {
    found = &it->second;
  } else {
    std::string_view name;
    if (!find(id, &name)) return nullptr;
    const RecordSchema* schema = lookup_(name);
    const int payload = schema != nullptr ? schema->kieker_payload_size() : 0;
    found = &types_.emplace(id, KiekerType{name, schema, payload}).first->second;
  }
  cached = {id, found};
  return found;
}

int32_t WriterRegistry::id(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  std::string_view stored = pool_.intern(s);
  auto next = static_cast<int32_t>(by_id_.size());
  ids_.emplace(stored, next);
  by_id_.push_back(stored);
  return next;
}

namespace {

std::string where(std::string_view file, size_t line) {
  return std::string(file) + ":" + std::to_string(line) + ": ";
}

}  // namespace

size_t parse_map_text(std::string_view text, std::string_view file, ReaderRegistry& registry,
                      std::vector<std::string>& errors) {
  size_t added = 0;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;

    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      errors.push_back(where(file, line_no) +
                       "malformed map entry (no '='): " + std::string(line.substr(0, 80)));
      continue;
    }
    std::string_view key = line.substr(0, eq);
    if (!key.empty() && key.front() == '$') key.remove_prefix(1);
    int32_t id = -1;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || ec != std::errc() || end != key.data() + key.size() || id < 0) {
      errors.push_back(where(file, line_no) + "malformed map entry (id '" + std::string(key) +
                       "' is not a non-negative 32-bit integer)");
      continue;
    }
    std::string value = decode_map_value(line.substr(eq + 1));
    switch (registry.add(id, value)) {
      case ReaderRegistry::AddResult::kAdded:
        ++added;
        break;
      case ReaderRegistry::AddResult::kSame:
        break;
      case ReaderRegistry::AddResult::kConflict: {
        std::string_view first;
        registry.find(id, &first);
        errors.push_back(where(file, line_no) + "duplicate map id " + std::to_string(id) + " ('" +
                         value + "'); keeping the earlier value '" + std::string(first) + "'");
        break;
      }
    }
  }
  return added;
}

bool read_map_file(const std::string& path, ReaderRegistry& registry,
                   std::vector<std::string>& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back("cannot open " + path + ": " + std::strerror(errno));
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    errors.push_back("cannot read " + path);
    return false;
  }
  parse_map_text(text.view(), path, registry, errors);
  return true;
}

void FileReport::error(std::string_view where, std::string_view reason) {
  stats_.ok = false;
  if (++errors_ > kMaxErrors) return;
  stats_.errors.push_back(file_ + ": " + std::string(where) + ": " + std::string(reason));
}

void FileReport::warning(std::string_view text) {
  stats_.warnings.push_back(file_ + ": " + std::string(text));
}

void FileReport::unknown_class(std::string_view class_name) {
  ++stats_.skipped;
  for (auto& [name, count] : unknown_) {
    if (name == class_name) {
      ++count;
      return;
    }
  }
  unknown_.emplace_back(std::string(class_name), 1);
}

void FileReport::finish() {
  for (const auto& [name, count] : unknown_) {
    warning("skipped " + std::to_string(count) + " record(s) of type " + name +
            " (no built-in schema)");
  }
  unknown_.clear();
  if (errors_ > kMaxErrors) {
    stats_.errors.push_back(file_ + ": " + std::to_string(errors_ - kMaxErrors) +
                            " further error(s) not listed");
  }
  errors_ = 0;
}

}  // namespace sonde::format::kieker
