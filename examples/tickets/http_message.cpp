// HTTP/1.1 requests read from a connection's bytes, and responses written.
// Enough of the protocol for a load driver and curl: a request line,
// headers, Content-Length bodies (no chunked requests), keep-alive.
#include "http_message.hpp"

#include <cctype>

namespace tickets {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 &&
               hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

void parse_form(std::string_view text, std::map<std::string, std::string>& out) {
  while (!text.empty()) {
    const std::size_t amp = text.find('&');
    const std::string_view pair = text.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (!pair.empty())
      out[url_decode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

}  // namespace

Parse parse_request(std::string_view bytes, Request& out, std::size_t& consumed) {
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos)
    return bytes.size() > kMaxHead ? Parse::kTooLarge : Parse::kIncomplete;
  if (head_end > kMaxHead) return Parse::kTooLarge;
  const std::string_view head = bytes.substr(0, head_end);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return Parse::kBad;
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return Parse::kBad;
  out = Request{};
  out.method = std::string(line.substr(0, sp1));
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::size_t question = target.find('?');
  out.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) parse_form(target.substr(question + 1), out.query);
  // HTTP/1.0 connections close after their answer (no 1.0 keep-alive).
  const bool http10 = version == "HTTP/1.0";
  out.keep_alive = !http10;

  std::size_t body_length = 0;
  bool has_length = false;
  std::string_view rest =
      line_end == std::string_view::npos ? std::string_view() : head.substr(line_end + 2);
  while (!rest.empty()) {
    const std::size_t end = rest.find("\r\n");
    const std::string_view header = rest.substr(0, end);
    const std::size_t colon = header.find(':');
    if (colon == std::string_view::npos || colon == 0) return Parse::kBad;
    const std::string_view name = header.substr(0, colon);
    // No whitespace in a name and no folded lines (RFC 9112 5.1, 5.2): a
    // "Content-Length :" ignored would make the body the next request.
    if (name.find_first_of(" \t") != std::string_view::npos) return Parse::kBad;
    const std::string_view value = trim(header.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      if (has_length) return Parse::kBad;  // two lengths: which one frames the body is ambiguous
      has_length = true;
      if (value.empty() || value.size() > 9)
        return value.size() > 9 ? Parse::kTooLarge : Parse::kBad;
      body_length = 0;
      for (char c : value) {
        if (c < '0' || c > '9') return Parse::kBad;
        body_length = body_length * 10 + static_cast<std::size_t>(c - '0');
      }
      if (body_length > kMaxBody) return Parse::kTooLarge;
    } else if (iequals(name, "Transfer-Encoding")) {
      return Parse::kBad;  // chunked request bodies are not read
    } else if (iequals(name, "Connection")) {
      if (iequals(value, "close")) out.keep_alive = false;
      if (iequals(value, "keep-alive") && !http10) out.keep_alive = true;
    }
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 2);
  }
  const std::size_t total = head_end + 4 + body_length;
  if (bytes.size() < total) return Parse::kIncomplete;
  parse_form(bytes.substr(head_end + 4, body_length), out.query);
  consumed = total;
  return Parse::kRequest;
}

std::string http_bytes(const Response& r, bool keep_alive) {
  std::string out =
      "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(r.body.size()) +
      (keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
  out += r.body;
  return out;
}

Response error_response(int status, const std::string& message) {
  return Response{status, "{\"error\":" + json_string(message) + "}"};
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char* const digits = "0123456789abcdef";
          out += "\\u00";
          out += digits[(c >> 4) & 0xf];
          out += digits[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace tickets
