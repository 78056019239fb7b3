// The structure of an SQL statement without its parameter values, so that
// "SELECT * FROM item WHERE id = 7" and "... id = 8" cluster together.
#pragma once

#include <string>
#include <string_view>

namespace sonde::diagnose::heuristics {

// Quoted strings and numeric literals become '?', runs of whitespace one
// space, the text is trimmed; keywords and identifiers are kept as written.
std::string sql_shape(std::string_view sql);

}  // namespace sonde::diagnose::heuristics
