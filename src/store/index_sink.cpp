#include "store/index_sink.hpp"

#include "store/clickhouse_writer.hpp"
#include "store/index_writer.hpp"

namespace sonde::store {

bool is_clickhouse_url(const std::string& out) { return out.rfind("clickhouse://", 0) == 0; }

std::unique_ptr<TraceIndex> open_trace_index(const std::string& out, std::string* error,
                                             uint32_t collector_id) {
  if (is_clickhouse_url(out)) {
    ClickHouseUrl url;
    if (std::string e = parse_clickhouse_url(out, &url); !e.empty()) {
      *error = e;
      return nullptr;
    }
    auto writer = std::make_unique<ClickHouseWriter>(url, 5000, collector_id);
    if (std::string e = writer->open(); !e.empty()) {
      *error = e;
      return nullptr;
    }
    return writer;
  }
  if (collector_id != 0) {
    *error =
        "a collector id is for several collectors writing one ClickHouse database; the "
        "embedded store " +
        out + " has one collector";
    return nullptr;
  }
  auto writer = std::make_unique<IndexWriter>();
  if (std::string e = writer->open(out); !e.empty()) {
    *error = e;
    return nullptr;
  }
  return writer;
}

}  // namespace sonde::store
