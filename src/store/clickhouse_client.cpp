#include "store/clickhouse_client.hpp"

#include <httplib.h>

#include <charconv>

#include "store/url_encode.hpp"

namespace sonde::store {

namespace {

bool valid_identifier(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string parse_clickhouse_url(const std::string& url, ClickHouseUrl* out) {
  const std::string scheme = "clickhouse://";
  const std::string usage = "'" + url + "': expected clickhouse://HOST[:PORT]/DATABASE";
  if (url.rfind(scheme, 0) != 0) return usage;
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) return usage;
  std::string host = rest.substr(0, slash);
  out->database = rest.substr(slash + 1);
  out->port = 8123;
  if (const size_t colon = host.rfind(':'); colon != std::string::npos) {
    const std::string port = host.substr(colon + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value <= 0 || value > 65535) {
      return usage + " (bad port '" + port + "')";
    }
    out->port = value;
    host = host.substr(0, colon);
  }
  if (host.empty()) return usage;
  out->host = host;
  if (!valid_identifier(out->database)) {
    return usage + " (the database name takes letters, digits and '_')";
  }
  return "";
}

ClickHouseClient::ClickHouseClient(ClickHouseUrl url)
    : url_(std::move(url)), http_(std::make_unique<httplib::Client>(url_.host, url_.port)) {
  http_->set_connection_timeout(5);
  http_->set_read_timeout(60);
  http_->set_write_timeout(60);
  http_->set_keep_alive(true);
  // Headers and body go out in two writes: without this, every request
  // waits for a delayed ACK (~40 ms).
  http_->set_tcp_nodelay(true);
}

ClickHouseClient::~ClickHouseClient() = default;

std::string ClickHouseClient::post(const std::string& path, const std::string& body,
                                   std::string* result) {
  const httplib::Result r = http_->Post(path.c_str(), body, "text/plain");
  if (!r) {
    return "ClickHouse at " + where() + ": " + httplib::to_string(r.error());
  }
  if (r->status != 200) {
    std::string message = r->body;
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
    return "ClickHouse at " + where() + ": HTTP " + std::to_string(r->status) + ": " + message;
  }
  if (result) *result = r->body;
  return "";
}

std::string ClickHouseClient::query(const std::string& sql, std::string* result, bool in_database) {
  const std::string path = in_database ? "/?database=" + url_encode(url_.database) : "/";
  return post(path, sql, result);
}

std::string ClickHouseClient::insert(const std::string& table, const std::string& rows) {
  if (rows.empty()) return "";
  const std::string path = "/?database=" + url_encode(url_.database) +
                           "&query=" + url_encode("INSERT INTO " + table + " FORMAT TabSeparated");
  return post(path, rows, nullptr);
}

std::vector<std::vector<std::string>> ClickHouseClient::parse_rows(const std::string& tsv) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  for (size_t i = 0; i < tsv.size(); ++i) {
    const char c = tsv[i];
    if (c == '\\' && i + 1 < tsv.size()) {
      const char e = tsv[++i];
      switch (e) {
        case 'n':
          field += '\n';
          break;
        case 't':
          field += '\t';
          break;
        case 'r':
          field += '\r';
          break;
        case '0':
          field += '\0';
          break;
        case 'b':
          field += '\b';
          break;
        case 'f':
          field += '\f';
          break;
        default:
          field += e;  // \\ \' and anything else: the character itself
      }
    } else if (c == '\t') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string ClickHouseClient::quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

void ClickHouseClient::append_field(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace sonde::store
