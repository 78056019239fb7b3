#include "diagnose/heuristic.hpp"

#include <cmath>

#include "diagnose/heuristics/all.hpp"

namespace sonde::diagnose {

const char* status_name(Status s) {
  switch (s) {
    case Status::kDetected:
      return "detected";
    case Status::kNotDetected:
      return "not_detected";
    case Status::kSkipped:
      return "skipped";
    case Status::kNotEvaluated:
      return "not_evaluated";
  }
  return "not_evaluated";
}

const std::map<std::string, std::unique_ptr<Heuristic>>& heuristic_registry() {
  static const auto registry = [] {
    std::map<std::string, std::unique_ptr<Heuristic>> r;
    auto add = [&r](std::unique_ptr<Heuristic> h) {
      std::string name = h->name();
      r.emplace(std::move(name), std::move(h));
    };
    using namespace heuristics;
    add(make_performance_problem());
    add(make_application_hiccups());
    add(make_continuously_violated_requirements());
    add(make_the_ramp());
    add(make_traffic_jam());
    add(make_one_lane_bridge());
    add(make_dispensable_synchronization());
    add(make_database_olb());
    add(make_the_stifle());
    add(make_expensive_database_call());
    add(make_excessive_messaging());
    add(make_database_congestion());
    add(make_the_blob());
    add(make_empty_semi_trucks());
    add(make_time_outside_application());
    return r;
  }();
  return registry;
}

std::string parameter_value_problem(const ParameterKind& kind, double value) {
  if (kind.scale != ParameterKind::kSwitch) return "";
  if (value == std::floor(value) && value >= 0 && value < kind.settings) return "";
  return "an integer from 0 to " + std::to_string(kind.settings - 1);
}

NodeResult not_evaluated(std::string reason) {
  NodeResult r;
  r.status = Status::kNotEvaluated;
  r.reason = std::move(reason);
  return r;
}

std::string describe_sample(const Experiment& e, size_t n) {
  return "experiment '" + e.id + "' (" + std::to_string(e.users) +
         " users), n=" + std::to_string(n);
}

}  // namespace sonde::diagnose
