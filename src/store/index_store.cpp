#include "store/index_store.hpp"

#include <filesystem>

#include "store/clickhouse_store.hpp"
#include "store/index_schema.hpp"
#include "store/index_sink.hpp"
#include "store/sqlite_store.hpp"

namespace sonde::store {

bool is_indexed_store(const std::string& path) {
  std::error_code ec;
  return is_clickhouse_url(path) ||
         std::filesystem::is_regular_file(std::filesystem::path(path) / kIndexFileName, ec);
}

std::unique_ptr<TraceStore> open_indexed_store(const std::string& path, std::string* error) {
  if (is_clickhouse_url(path)) return ClickHouseStore::open(path, error);
  return SqliteStore::open(path, error);
}

}  // namespace sonde::store
