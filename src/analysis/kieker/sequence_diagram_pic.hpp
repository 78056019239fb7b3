// Sequence diagrams as pic (assemblySequenceDiagram-<id>.pic,
// deploymentSequenceDiagram-<id>.pic), for GNU pic / groff or plotutils'
// pic2plot. The diagram body is Kieker's, line for line: it calls macros
// (object, actor, message, rmessage, active, ...) whose definitions each
// file carries in front. Kieker copies in UMLGraph's sequence.pic there;
// sonde writes its own definitions of the same macros instead.
#pragma once

#include <string>
#include <string_view>

#include "analysis/kieker/sequence_diagram.hpp"

namespace sonde::analysis {

// The macro definitions every file starts with (after ".PS").
std::string_view sequence_pic_macros();

// A pic string literal, quotes included: '"' and '\' escaped, control
// characters and invalid UTF-8 replaced by '?'.
std::string pic_quote(std::string_view text);

std::string sequence_diagram_pic(const SequenceDiagram& diagram);

}  // namespace sonde::analysis
