// How flow events' names are compared and completed, shared by the event
// buffer's builder (flow_trace_builder.cpp) and the reconstructor's direct
// path (trace_reconstructor_direct.cpp), which must agree exactly.
#pragma once

#include <string_view>

#include "analysis/model/operation_signature.hpp"

namespace sonde::analysis {

// Equal text; names of one trace are interned, so equal ones usually share
// their bytes and need no comparison (memcmp was 4 % of reading a log).
inline bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

// A flow event without a class signature takes the class from its
// operation signature.
inline std::string_view component_or_class(std::string_view component, std::string_view operation) {
  return component.empty() ? class_of_signature(operation) : component;
}

}  // namespace sonde::analysis
