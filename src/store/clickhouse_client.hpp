// A small client for ClickHouse's HTTP interface (port 8123 by default):
// statements go in the request body, results come back as TabSeparated
// text, inserts send TabSeparated rows. Errors name the server and carry
// ClickHouse's message. Works with Debian 12's clickhouse-server (18.16),
// so it uses no query parameters: strings are quoted with quote().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace httplib {
class Client;
}

namespace sonde::store {

struct ClickHouseUrl {
  std::string host;
  int port = 8123;
  std::string database;
};

// "clickhouse://HOST[:PORT]/DATABASE". Returns "" or what is wrong.
std::string parse_clickhouse_url(const std::string& url, ClickHouseUrl* out);

class ClickHouseClient {
 public:
  explicit ClickHouseClient(ClickHouseUrl url);
  ~ClickHouseClient();
  ClickHouseClient(const ClickHouseClient&) = delete;
  ClickHouseClient& operator=(const ClickHouseClient&) = delete;

  // Runs one statement in the URL's database (or none, for CREATE
  // DATABASE); stores the TabSeparated result. Returns "" or the error.
  std::string query(const std::string& sql, std::string* result = nullptr, bool in_database = true);
  // INSERT INTO `table` FORMAT TabSeparated with `rows` as the data.
  std::string insert(const std::string& table, const std::string& rows);
  // Rows of a TabSeparated result, fields unescaped.
  static std::vector<std::vector<std::string>> parse_rows(const std::string& tsv);
  // A string literal for SQL: '…' with \ and ' escaped.
  static std::string quote(std::string_view text);
  // Appends a TabSeparated field (tab, newline and backslash escaped).
  static void append_field(std::string& out, std::string_view text);

  const ClickHouseUrl& url() const { return url_; }
  std::string where() const { return url_.host + ":" + std::to_string(url_.port); }

 private:
  std::string post(const std::string& path, const std::string& body, std::string* result);

  ClickHouseUrl url_;
  std::unique_ptr<httplib::Client> http_;
};

}  // namespace sonde::store
