// Sequence diagrams drawn directly as SVG, so that no pic renderer
// (plotutils' pic2plot, which Kieker relies on) is needed: one lifeline per
// participant, activation bars, calls as solid arrows labelled with the
// operation, returns as dashed arrows. Every name is XML-escaped.
#pragma once

#include <string>
#include <string_view>

#include "analysis/kieker/sequence_diagram.hpp"
#include "analysis/text/xml_escape.hpp"

namespace sonde::analysis {

std::string sequence_diagram_svg(const SequenceDiagram& diagram);

}  // namespace sonde::analysis
