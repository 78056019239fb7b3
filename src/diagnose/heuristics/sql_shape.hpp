// The structure of an SQL statement without its parameter values, so that
// "SELECT * FROM item WHERE id = 7" and "... id = 8" cluster together.
#pragma once

#include <string>
#include <string_view>

namespace sonde::diagnose::heuristics {

// Quoted strings and numeric literals become '?', runs of whitespace one
// space, the text is trimmed; keywords and identifiers are kept as written.
// Lists of two or more values have one shape, whatever their length: a run of equal parts that
// hold a parameter is written once and "..." stands for the rest, so
// "IN (?, ?, ?)" is "IN (?, ...)", "VALUES (?, ?), (?, ?)" is
// "VALUES (?, ...), ..." and "CASE WHEN ? THEN ? WHEN ? THEN ? END" is
// "CASE WHEN ? THEN ? ... END". Without this, a statement built for the
// rows at hand would count as a different statement per row count.
std::string sql_shape(std::string_view sql);

}  // namespace sonde::diagnose::heuristics
