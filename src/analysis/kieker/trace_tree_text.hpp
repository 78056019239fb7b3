// One trace as an indented call tree with inclusive and exclusive times,
// for people reading a single request in a terminal.
#pragma once

#include <ostream>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

void write_trace_tree(std::ostream& out, const Trace& trace);

}  // namespace sonde::analysis
