// Opens a collector's store for reading, whichever kind it is: a directory
// with index.sqlite (SqliteStore) or clickhouse://HOST:PORT/DATABASE
// (ClickHouseStore). For `sonde serve DIR|URL`; a plain log is not an
// indexed store (serve reads it into the in-memory store instead).
#pragma once

#include <memory>
#include <string>

#include "store/trace_store.hpp"

namespace sonde::store {

// True for a ClickHouse URL or a directory holding index.sqlite.
bool is_indexed_store(const std::string& path);

// Null and *error (naming the path and reason) if it cannot be opened.
std::unique_ptr<TraceStore> open_indexed_store(const std::string& path, std::string* error);

}  // namespace sonde::store
