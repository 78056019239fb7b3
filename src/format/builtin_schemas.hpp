// Declares the table of built-in schemas (defined in builtin_schemas.cpp).
#pragma once
#include <span>

#include "format/schema.hpp"
namespace sonde::format {
// Schemas beyond the core flow records, each list in its own file:
// further Kieker record types (builtin_schemas_kieker.cpp) and the system
// sampler records (builtin_schemas_system.cpp), and the callable records
// (database calls, HTTP requests, exceptions, ...: builtin_schemas_callables.cpp).
std::span<const RecordSchema* const> kieker_extra_schemas();
std::span<const RecordSchema* const> system_schemas();
std::span<const RecordSchema* const> callable_schemas();
// Lock waits, message sends and W3C trace contexts (builtin_schemas_diagnostic.cpp).
std::span<const RecordSchema* const> diagnostic_schemas();
}  // namespace sonde::format
