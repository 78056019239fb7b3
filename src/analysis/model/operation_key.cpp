#include "analysis/model/operation_key.hpp"

#include <functional>

namespace sonde::analysis {

std::string_view to_string(AggregationLevel level) {
  return level == AggregationLevel::kDeployment ? "deployment" : "assembly";
}

bool parse_aggregation_level(std::string_view text, AggregationLevel* out) {
  if (text == "assembly") {
    *out = AggregationLevel::kAssembly;
  } else if (text == "deployment") {
    *out = AggregationLevel::kDeployment;
  } else {
    return false;
  }
  return true;
}

size_t OperationKeyHash::operator()(const OperationKey& k) const noexcept {
  std::hash<std::string_view> h;
  size_t seed = h(k.operation);
  // boost::hash_combine's mixing step.
  seed ^= h(k.component) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  seed ^= h(k.host) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

OperationKey operation_key(const Execution& e, AggregationLevel level) {
  return {level == AggregationLevel::kDeployment ? e.host : std::string_view(), e.component,
          e.operation};
}

}  // namespace sonde::analysis
