// Drops the standard library's default template arguments from demangled
// names, as C++ code leaves them out: "std::vector<int, std::allocator<int> >"
// reads "std::vector<int>". Only where the argument is the default: the
// trailing arguments of the containers, strings and unique_ptr below, and
// only when they equal what the template would have chosen from its earlier
// arguments ("std::set<int, std::less<void> >" and
// "std::vector<int, my::Alloc<int> >" stay). Two different types therefore
// never end up with one name. Works on C++ spelling ("std::", ", ") and on
// Kieker's ("std.", "| ", format/kieker_signature.hpp).
#pragma once

#include <string>

namespace sonde::format {

// Rewrites `text` in place; returns whether anything was dropped.
bool drop_default_template_arguments(std::string& text);

}  // namespace sonde::format
