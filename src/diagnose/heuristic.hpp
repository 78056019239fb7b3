// The interface every detection heuristic implements (one file each in
// heuristics/), the result of one hierarchy node, and its evidence.
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose {

// What a heuristic needs measured, as data, so the experiment engine can
// plan experiments and reuse one when two heuristics need the same.
struct ExperimentNeed {
  std::string kind;                 // single_user | load | scaling | custom
  std::string series;               // series name ("" for single experiments)
  int steps = 1;                    // experiments in the series
  std::vector<std::string> probes;  // response_time, lock_wait, database, messaging, cpu
};

enum class Status { kDetected, kNotDetected, kSkipped, kNotEvaluated };
const char* status_name(Status s);

struct Evidence {
  std::string location;  // operation / service, SQL statement or lock
  std::string test;      // e.g. "Welch t-test", "percentile > threshold"
  double p_value = std::numeric_limits<double>::quiet_NaN();
  double effect_size = std::numeric_limits<double>::quiet_NaN();
  std::string effect;  // what effect_size measures, e.g. "relative increase of the mean"
  std::string data;    // the experiments and sample sizes used
  std::string detail;  // one sentence for a non-expert
  nlohmann::json values = nlohmann::json::object();  // numbers behind it, for charts
};

struct NodeResult {
  std::string id;
  std::string heuristic;
  std::string title;
  Status status = Status::kNotEvaluated;
  std::string reason;  // why not evaluated / skipped, or the one-line verdict
  std::vector<Evidence> evidence;
  nlohmann::json charts = nlohmann::json::object();
  std::vector<NodeResult> children;
};

// The performance requirement for a service: `percentile` of its response
// times must stay at or below `threshold_ms`.
struct Requirement {
  double threshold_ms = 1000;
  double percentile = 0.99;
};

struct Settings {
  double alpha = 0.05;
  int cores = 0;  // servers for the queueing models; 0 = from the CPU records
  Requirement requirement;
  std::map<std::string, Requirement> per_service;
  const Requirement& for_service(const std::string& service) const {
    auto it = per_service.find(service);
    return it == per_service.end() ? requirement : it->second;
  }
};

// What a heuristic sees: the data, the settings, its own parameters,
// what its ancestors found (e.g. Traffic Jam's violating loads) and what
// its siblings evaluated before it found (Continuously Violated
// Requirements asks which services Application Hiccups claimed).
struct Context {
  const ExperimentData& data;
  const Settings& settings;
  std::map<std::string, double> params;
  const std::map<std::string, nlohmann::json>& ancestors;  // node heuristic -> its shared result
  // Earlier siblings that were evaluated, heuristic -> shared result; null
  // where the caller evaluates a node on its own.
  const std::map<std::string, nlohmann::json>* siblings = nullptr;
};

// What kind of number a parameter is. It says how `sonde diagnose
// --sensitivity` varies the parameter (docs/diagnose/parameters.md,
// "Sensitivity"); a parameter a heuristic does not declare is a threshold.
struct ParameterKind {
  enum Scale {
    kThreshold,     // a threshold or a count: multiplied by the factor
    kShare,         // a fraction in (0, 1): its odds x/(1-x) are multiplied
    kGrowthFactor,  // a factor its rule needs above 1: its excess over 1 is multiplied
    kSwitch,        // selects a rule: each of its other settings is evaluated
    kPlanSize,      // sets the experiment plan: stored data keeps the plan it ran
  };
  Scale scale = kThreshold;
  int settings = 2;  // a switch's settings, 0 .. settings - 1
};

class Heuristic {
 public:
  virtual ~Heuristic() = default;
  virtual std::string name() const = 0;         // registry key, e.g. "traffic_jam"
  virtual std::string title() const = 0;        // "Traffic Jam"
  virtual std::string description() const = 0;  // what it means, for the report
  virtual std::vector<ExperimentNeed> needs() const = 0;
  // Parameters and their defaults; a config may override these and only
  // these. Few are the thesis' values: most are sonde's own, where the
  // thesis gives no value (phi, tau, f_R, epsilon), where sonde departs
  // from the value it gives (One Lane Bridge's floor 0, not 15), where
  // its rule was extended (e.g. Expensive Database Call's dominant_share)
  // or derived from statistics; one rule was written after a scenario's
  // miss (Expensive Database Call's growth_rule). The comments in
  // defaults() do not cover every value:
  // docs/diagnose/parameters.md lists each parameter with its source and
  // whether it was set for one case.
  virtual std::map<std::string, double> defaults() const = 0;
  // The kinds of those parameters that are not thresholds.
  virtual std::map<std::string, ParameterKind> parameter_kinds() const { return {}; }
  // Fills status, reason, evidence, charts. `shared` receives what the
  // node's descendants may use.
  virtual NodeResult evaluate(const Context& ctx, nlohmann::json& shared) const = 0;
};

// All built-in heuristics, by name.
const std::map<std::string, std::unique_ptr<Heuristic>>& heuristic_registry();

// Whether `value` is a setting of a parameter of that kind: a switch
// takes the integers 0 .. settings - 1, anything else any number. Empty
// when it is; else what it must be ("an integer from 0 to 2"). The
// config reader rejects such a value; the evaluation, which may get
// values from elsewhere (a sensitivity study, a caller), reports the
// node not evaluated rather than let the heuristic guess.
std::string parameter_value_problem(const ParameterKind& kind, double value);

// Helpers for heuristics.
NodeResult not_evaluated(std::string reason);
std::string describe_sample(const Experiment& e, size_t n);

}  // namespace sonde::diagnose
