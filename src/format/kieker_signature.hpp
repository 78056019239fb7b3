// Maps C/C++ operation names to Kieker's Java-style signatures, which
// Kieker's tools parse as "<modifiers> <return> <pkg.Class>.<op>(<params>)":
// "::" becomes ".", free functions get their module's base name as class,
// and characters Kieker cannot carry (';' in .dat, ',' inside template
// arguments, which Kieker splits parameters on) are replaced.
#pragma once

#include <string>
#include <string_view>

namespace sonde::format {

struct KiekerSignature {
  std::string operation;  // e.g. "bookstore.Catalog.getBook(bool)"
  std::string component;  // e.g. "bookstore.Catalog"
};

KiekerSignature kieker_signature(std::string_view name, std::string_view module);

}  // namespace sonde::format
