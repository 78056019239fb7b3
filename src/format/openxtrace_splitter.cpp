#include "format/openxtrace_splitter.hpp"

#include <vector>

namespace sonde::format::openxtrace {
namespace {

std::string byte_position(std::istream& in) {
  const std::streamoff pos = in.tellg();
  return pos < 0 ? std::string("byte ?") : "byte " + std::to_string(pos);
}

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at line 1, column 7: " prefix, whose line and column count from
// where this parse call started, not from the start of the file.
std::string parse_error_reason(const std::string& what) {
  const size_t column = what.find("column ");
  if (column != std::string::npos) {
    const size_t colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// Assembles each top-level trace value into its own document and hands it
// on when complete. With `in_array`, the outermost array is the list of
// traces and is not assembled itself.
class ElementBuilder final : public nlohmann::json_sax<Json> {
 public:
  ElementBuilder(std::istream& in, bool in_array, size_t max_depth, const TraceCallback& on_trace,
                 SplitResult& result)
      : in_(in), in_array_(in_array), max_depth_(max_depth), on_trace_(on_trace), result_(result) {}

  // Bytes before the current parse call, for error positions.
  void set_base(std::streamoff base) { base_ = base; }

  bool null() override { return add(Json(nullptr)); }
  bool boolean(bool v) override { return add(Json(v)); }
  bool number_integer(number_integer_t v) override { return add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return add(Json(v)); }
  bool string(string_t& v) override { return add(Json(std::move(v))); }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) override { return open(Json::value_t::object); }
  bool start_array(std::size_t) override { return open(Json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    result_.ok = false;
    const std::streamoff at = base_ + static_cast<std::streamoff>(position);
    result_.error =
        "byte " + std::to_string(at > 0 ? at - 1 : 0) + ": " + parse_error_reason(ex.what());
    return false;
  }

 private:
  bool open(Json::value_t type) {
    if (++depth_ > max_depth_) {
      return fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
    }
    if (stack_.empty()) {
      if (in_array_ && depth_ == 1) return true;  // the list of traces itself
      element_ = Json(type);
      stack_.push_back(&element_);
      return true;
    }
    Json& parent = *stack_.back();
    // Pointers stay valid: only the innermost open container grows, and
    // std::map (objects) never moves its values.
    if (parent.is_array()) {
      parent.push_back(Json(type));
      stack_.push_back(&parent.back());
    } else {
      Json& slot = parent[key_];
      slot = Json(type);
      stack_.push_back(&slot);
    }
    return true;
  }

  bool close() {
    --depth_;
    if (stack_.empty()) return true;  // the end of the list of traces
    stack_.pop_back();
    if (!stack_.empty()) return true;
    return deliver(std::move(element_));
  }

  bool add(Json&& value) {
    if (stack_.empty()) return deliver(std::move(value));  // a scalar where a trace should be
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
    } else {
      parent[key_] = std::move(value);
    }
    return true;
  }

  bool deliver(Json&& element) {
    const std::string path =
        in_array_ ? "/" + std::to_string(result_.elements) : "#" + std::to_string(result_.elements);
    ++result_.elements;
    if (!on_trace_(std::move(element), path)) {
      result_.stopped = true;
      return false;
    }
    element_ = Json();
    return true;
  }

  bool fail(const std::string& reason) {
    result_.ok = false;
    result_.error = byte_position(in_) + ": " + reason;
    return false;
  }

  std::istream& in_;
  const bool in_array_;
  const size_t max_depth_;
  const TraceCallback& on_trace_;
  SplitResult& result_;
  std::streamoff base_ = 0;
  size_t depth_ = 0;
  Json element_;
  std::vector<Json*> stack_;
  std::string key_;
};

// Skips whitespace and a UTF-8 byte order mark; returns the next byte or EOF.
int skip_space(std::istream& in) {
  for (;;) {
    const int c = in.peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      in.get();
    } else if (c == 0xEF) {
      in.get();
      if (in.peek() == 0xBB) in.get();
      if (in.peek() == 0xBF) in.get();
    } else {
      return c;
    }
  }
}

}  // namespace

SplitResult split_traces(std::istream& in, size_t max_depth, const TraceCallback& on_trace) {
  SplitResult result;
  const int first = skip_space(in);
  if (first == std::char_traits<char>::eof()) {
    result.ok = false;
    result.error = "byte 0: no JSON value (empty file)";
    return result;
  }
  const bool in_array = first == '[';
  ElementBuilder builder(in, in_array, max_depth, on_trace, result);
  if (in_array) {
    builder.set_base(in.tellg());
    Json::sax_parse(in, &builder, Json::input_format_t::json, true);
    return result;
  }
  // One object, or objects one after another: parse one value at a time.
  while (result.ok && !result.stopped) {
    if (skip_space(in) == std::char_traits<char>::eof()) break;
    builder.set_base(in.tellg());
    if (!Json::sax_parse(in, &builder, Json::input_format_t::json, false)) break;
  }
  return result;
}

}  // namespace sonde::format::openxtrace
