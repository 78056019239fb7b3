#include "json_counts.hpp"

#include <cstddef>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace sonde::test {
namespace {

using json = nlohmann::json;

// Tracks, per open container, whether it is an element of a counted array
// and whether it has shown the wanted key and value.
class ElementCounter final : public nlohmann::json_sax<json> {
 public:
  ElementCounter(const std::string& array_key, const std::string& key, const std::string& value)
      : array_key_(array_key), key_(key), value_(value) {}

  size_t count() const { return count_; }

  bool start_object(size_t) override {
    open({false, !frames_.empty() && frames_.back().counted_array, false});
    return true;
  }
  bool end_object() override {
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f.element && f.matched) ++count_;
    return true;
  }
  bool start_array(size_t) override {
    const bool counted = !frames_.empty() && !frames_.back().is_array && last_key_ == array_key_;
    open({true, false, false, counted});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    last_key_ = k;
    if (in_element() && k == key_ && value_.empty()) frames_.back().matched = true;
    return true;
  }
  bool string(string_t& s) override {
    if (in_element() && last_key_ == key_ && s == value_) frames_.back().matched = true;
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool parse_error(size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error_ = "at byte " + std::to_string(position) + ": " + e.what();
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool is_array;
    bool element;  // an object directly inside a counted array
    bool matched;
    bool counted_array = false;
  };
  void open(Frame f) {
    frames_.push_back(f);
    last_key_.clear();
  }
  // The wanted key counts only on the element itself, not in objects nested in it.
  bool in_element() const { return !frames_.empty() && frames_.back().element; }

  const std::string& array_key_;
  const std::string& key_;
  const std::string& value_;
  std::vector<Frame> frames_;
  std::string last_key_;
  std::string error_;
  size_t count_ = 0;
};

// A character iterator of this file's own type, so that the parser's lexer
// is instantiated here, at -O2: over std::string's iterators it would share
// (and the linker could keep) the -O0 driver's instantiation, which profiled
// as most of the time.
struct CharIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* at;
  reference operator*() const { return *at; }
  CharIterator& operator++() {
    ++at;
    return *this;
  }
  CharIterator operator++(int) { return CharIterator{at++}; }
  bool operator==(const CharIterator&) const = default;
};

void parse_into(ElementCounter& counter, const std::string& text,
                const std::filesystem::path& file) {
  const CharIterator begin{text.data()};
  const CharIterator end{text.data() + text.size()};
  if (!json::sax_parse(begin, end, &counter))
    throw std::runtime_error(file.string() + ": not valid JSON " + counter.error());
}

}  // namespace

size_t count_json_elements(const std::filesystem::path& file, const std::string& array_key,
                           const std::string& key, const std::string& value, bool lines) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot open");
  ElementCounter counter(array_key, key, value);
  if (lines) {
    for (std::string line; std::getline(in, line);) parse_into(counter, line, file);
  } else {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    parse_into(counter, text, file);
  }
  return counter.count();
}

}  // namespace sonde::test
