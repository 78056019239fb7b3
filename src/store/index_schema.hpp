// The schema of DIR/index.sqlite, the embedded store's index of traces
// (documented column by column in docs/formats/store.md). Written by
// IndexWriter (the collector, `sonde index`), read by SqliteStore.
#pragma once

#include <string>

namespace sonde::store {

// Bumped whenever a table or column changes meaning; readers refuse others.
// 2: executions packed per trace (execution_blob.hpp) instead of a row each.
// 3: traces many to a row (trace_batch.hpp) instead of a row each.
// 4: per row, its root operations (`batch_roots`) and trace-id spans
//    (`batch_id_spans`), so that searches skip the rows they need not unpack;
//    the operations' statistics state (`operation_state`) at a clean close,
//    so that reopening does not read every execution again.
// 5: a native log's operations named as C++ writes them ("shapes::make(int)",
//    format/operation_name.hpp) instead of in Kieker's form ("shapes.make(int)").
inline constexpr int kIndexSchemaVersion = 5;
inline constexpr const char* kIndexFileName = "index.sqlite";

// CREATE TABLE/INDEX IF NOT EXISTS statements for every table.
const std::string& index_schema_sql();

}  // namespace sonde::store
