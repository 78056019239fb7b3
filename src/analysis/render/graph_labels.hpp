// Label text shared by the DOT writers (and, later, other diagram outputs).
#pragma once

#include <string>
#include <string_view>

#include "analysis/model/operation_key.hpp"

namespace sonde::analysis {

// "Catalog" (short) or the component as recorded.
std::string component_label(std::string_view component, bool short_labels);
// "getBook(..)" (short) or the signature as recorded.
std::string operation_label(std::string_view operation, bool short_labels);
// "1635 calls, mean 3.68 ms" (with ", 2 failed" when some failed).
std::string timing_label(const TimeAccumulator& time);

}  // namespace sonde::analysis
