#include "analysis/render/graph_labels.hpp"

#include "analysis/model/operation_signature.hpp"
#include "analysis/text/duration_format.hpp"

namespace sonde::analysis {

std::string component_label(std::string_view component, bool short_labels) {
  return std::string(short_labels ? short_class_label(component) : component);
}

std::string operation_label(std::string_view operation, bool short_labels) {
  return short_labels ? short_operation_label(operation) : std::string(operation);
}

std::string timing_label(const TimeAccumulator& time) {
  std::string label = std::to_string(time.count) + (time.count == 1 ? " call" : " calls");
  if (time.failed > 0) label += ", " + std::to_string(time.failed) + " failed";
  label += ", mean " + format_duration(time.mean());
  return label;
}

}  // namespace sonde::analysis
