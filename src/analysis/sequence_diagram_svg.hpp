// Sequence diagrams drawn directly as SVG, so that no pic renderer
// (plotutils' pic2plot, which Kieker relies on) is needed: one lifeline per
// participant, activation bars, calls as solid arrows labelled with the
// operation, returns as dashed arrows. Every name is XML-escaped.
#pragma once

#include <string>
#include <string_view>

#include "analysis/sequence_diagram.hpp"

namespace sonde::analysis {

// `text` safe inside XML character data and attribute values: & < > " '
// become entities; control characters and invalid UTF-8 become '?' (XML 1.0
// cannot carry them).
std::string xml_escape(std::string_view text);

std::string sequence_diagram_svg(const SequenceDiagram& diagram);

}  // namespace sonde::analysis
