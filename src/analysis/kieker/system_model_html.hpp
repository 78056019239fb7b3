// Kieker's system model as HTML (system-entities.html, --print-System-Model):
// tables of component types, operations, assembly components, execution
// containers and deployment components with their ids, cross-linked. Rows
// are listed by descending id, which is the order Kieker's Hashtables give
// for ids 1..n.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/kieker/kieker_system_model.hpp"

namespace sonde::analysis {

// An operation signature parsed the way Kieker does
// (ClassOperationSignaturePair): "public static void a.B.main(java.lang.String[])"
// has modifiers {public, static}, return type "void", name "main" and one
// parameter type. Without a space before the name there is no return type.
struct KiekerSignature {
  std::vector<std::string> modifiers;
  std::string return_type;  // "" = none
  std::string name;
  std::vector<std::string> parameters;
};
KiekerSignature parse_kieker_signature(std::string_view signature);

// Kieker's Signature.toString: "public static main(java.lang.String[]):void".
std::string kieker_signature_text(const KiekerSignature& signature);

// Kieker's HTML escaping (& < > " ' /), plus control characters and
// invalid UTF-8 as '?'.
std::string html_escape(std::string_view text);

std::string system_model_html(const KiekerSystemModel& model);

}  // namespace sonde::analysis
