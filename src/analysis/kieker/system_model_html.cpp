#include "analysis/kieker/system_model_html.hpp"

#include <algorithm>

#include "analysis/text/text_trim.hpp"
#include "analysis/text/utf8_scan.hpp"
#include "analysis/text/xml_escape.hpp"

namespace sonde::analysis {
namespace {

std::string type_package(std::string_view fq) {
  const size_t dot = fq.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? "" : std::string(fq.substr(0, dot));
}

std::string type_name(std::string_view fq) {
  const size_t dot = fq.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? std::string(fq)
                                                   : std::string(fq.substr(dot + 1));
}

// <a name="KIND-id">caption</a> and <a href="#KIND-id">caption</a>.
std::string anchor(std::string_view kind, int32_t id, const std::string& caption) {
  return "<a name=\"" + std::string(kind) + "-" + std::to_string(id) + "\">" + caption + "</a>";
}
std::string link(std::string_view kind, int32_t id, const std::string& caption) {
  return "<a href=\"#" + std::string(kind) + "-" + std::to_string(id) + "\">" + caption + "</a>";
}

void open_table(std::string& out, std::string_view title, const std::vector<std::string>& columns) {
  out += "<table class=\"tab\" border=\"1\" style=\"width:100%\">\n";
  out += "<tr><th class=\"tabTitle\" colspan=\"" + std::to_string(columns.size()) + "\">" +
         std::string(title) + "</th></tr>\n<tr>\n";
  for (const std::string& c : columns) out += "<th class=\"colTitle space\">" + c + "</th>\n";
  out += "</tr>\n";
}

void row(std::string& out, const std::vector<std::string>& cells) {
  out += "<tr class=\"cell\">\n";
  for (const std::string& c : cells) {
    out += "<td class=\"space\">" + (c.empty() ? std::string("&nbsp;") : c) + "</td>\n";
  }
  out += "</tr>\n";
}

std::string dots(int lines) {
  std::string out = "<pre>\n";
  for (int i = 0; i < lines; ++i) out += ".\n";
  return out + "</pre>\n";
}

constexpr std::string_view kHead =
    "<html><head><title>System Model Reconstructed by Kieker.TraceAnalysis</title>\n"
    "<style type=\"text/css\">\n"
    ".colTitle {font-size: 11px; background: linear-gradient(to bottom, #FDFDFD, #DDDDDD) "
    "transparent }\n"
    ".cell {font-family: monospace; font-size: 10px; font-family: inherited}\n"
    ".tabTitle {padding: 4px 4px; font-size: 12px; background: linear-gradient(to bottom, "
    "#FFFFFF, #CCEEFF) transparent; border: 1px solid #4DC4FF;color: #333399}\n"
    ".tab {border-collapse: collapse;  border: 1px solid #9D9D9D; font-family: \"Segoe UI\", "
    "\"Verdana\", \"Arial\", sans-serif}\n"
    ".space{padding: 4px 10px;}\n"
    "</style>\n"
    "</head><body>\n";

}  // namespace

KiekerSignature parse_kieker_signature(std::string_view signature) {
  KiekerSignature s;
  std::string_view head = signature;
  const size_t open = signature.find('(');
  if (open != std::string_view::npos) {
    head = signature.substr(0, open);
    // Kieker drops the last character (the ')') and splits the rest at ','.
    std::string_view params = signature.substr(open + 1);
    if (!params.empty()) params.remove_suffix(1);
    for (size_t start = 0; start <= params.size();) {
      const size_t comma = std::min(params.find(',', start), params.size());
      const std::string_view token = params.substr(start, comma - start);
      if (!token.empty()) s.parameters.emplace_back(trim_space(token));
      start = comma + 1;
    }
  }
  std::vector<std::string> words;
  if (head.rfind(' ') == std::string_view::npos) {
    words.emplace_back(head);
  } else {
    for (size_t start = 0; start <= head.size();) {
      size_t end = start;
      while (end < head.size() && !is_ascii_space(head[end])) ++end;
      words.emplace_back(head.substr(start, end - start));
      start = end + 1;
    }
    // Java's split drops trailing empty strings.
    while (words.size() > 1 && words.back().empty()) words.pop_back();
  }
  const std::string qualified = words.back();
  words.pop_back();
  // Constructors ("<init>") have no return type.
  const bool constructor = signature.find("<init>") != std::string_view::npos;
  if (!words.empty() && !constructor) {
    s.return_type = words.back();
    words.pop_back();
  }
  s.modifiers = std::move(words);
  const size_t dot = qualified.rfind('.');
  s.name = dot == std::string::npos ? qualified : qualified.substr(dot + 1);
  return s;
}

std::string kieker_signature_text(const KiekerSignature& signature) {
  std::string out;
  for (const std::string& m : signature.modifiers) out += m + " ";
  out += signature.name + "(";
  for (size_t i = 0; i < signature.parameters.size(); ++i) {
    if (i > 0) out += ",";
    out += signature.parameters[i];
  }
  out += ")";
  if (!signature.return_type.empty()) out += ":" + signature.return_type;
  return out;
}

// XML escaping is valid HTML escaping for text and quoted attribute values.
std::string html_escape(std::string_view text) { return xml_escape(text); }

std::string system_model_html(const KiekerSystemModel& model) {
  const auto types = static_cast<int32_t>(model.assemblies());
  const auto operations = static_cast<int32_t>(model.operations());
  std::string out(kHead);
  out += dots(10);
  out += "<span style=\"display: inline-block\">\n";

  open_table(out, "Component Types", {"ID", "Package", "Name", "Operations"});
  for (int32_t t = types; t >= 1; --t) {
    const std::string& fq = model.component_type(t);
    std::string ops;
    for (int32_t op = 1; op <= operations; ++op) {
      if (model.operation_type(op) != t) continue;
      const KiekerSignature sig = parse_kieker_signature(model.operation_signature(op));
      ops += "<li>" + link("OPERATION", op, html_escape(kieker_signature_text(sig))) + "</li>";
    }
    row(out, {anchor("COMPONENT_TYPE", t, std::to_string(t)), html_escape(type_package(fq)),
              html_escape(type_name(fq)), ops});
  }
  out += "</table>\n<br/>\n";

  open_table(out, "Operations", {"ID", "Component type", "Name", "Parameter types", "Return type"});
  for (int32_t op = operations; op >= 1; --op) {
    const KiekerSignature sig = parse_kieker_signature(model.operation_signature(op));
    const int32_t type = model.operation_type(op);
    std::string params;
    for (const std::string& p : sig.parameters) params += "<li>" + html_escape(p) + "</li>";
    row(out, {anchor("OPERATION", op, std::to_string(op)),
              link("COMPONENT_TYPE", type, html_escape(model.component_type(type))),
              html_escape(sig.name), params,
              html_escape(sig.return_type.empty() ? "<NO-RETURN-TYPE>" : sig.return_type)});
  }
  out += "</table>\n<br/>\n";

  // One assembly component per component type, with the same id.
  open_table(out, "Assembly Components", {"ID", "Name", "Component type"});
  for (int32_t a = types; a >= 1; --a) {
    row(out, {anchor("ASSEMBLY_COMPONENT", a, std::to_string(a)), "@" + std::to_string(a),
              link("COMPONENT_TYPE", a, html_escape(model.component_type(a)))});
  }
  out += "</table>\n<br/>\n";

  open_table(out, "Execution Containers", {"ID", "Name"});
  for (auto c = static_cast<int32_t>(model.containers()); c >= 1; --c) {
    row(out, {anchor("EXECUTION_CONTAINER", c, std::to_string(c)),
              html_escape(model.container_name(c))});
  }
  out += "</table>\n<br/>\n";

  open_table(out, "Deployment Components", {"ID", "Assembly component", "Execution container"});
  for (auto a = static_cast<int32_t>(model.allocations()); a >= 1; --a) {
    const int32_t assembly = model.allocation_assembly(a);
    const int32_t container = model.allocation_container(a);
    // Kieker links the assembly component under the deployment component's
    // anchor kind; kept so the files compare equal.
    row(out,
        {anchor("ALLOCATION_COMPONENT", a, std::to_string(a)),
         link("ALLOCATION_COMPONENT", assembly,
              html_escape("@" + std::to_string(assembly) + ":" + model.component_type(assembly))),
         link("EXECUTION_CONTAINER", container, html_escape(model.container_name(container)))});
  }
  out += "</table>\n</span>\n";
  out += dots(50);
  out += "</body></html>\n";
  return out;
}

}  // namespace sonde::analysis
