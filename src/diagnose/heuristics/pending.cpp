// Heuristics of the thesis hierarchy that this build does not implement
// yet. They stay in the hierarchy (their needs are known, so the engine can
// plan for them) and report not_evaluated with this reason, never
// not_detected: absence of a check is not absence of a problem.
#include "diagnose/heuristics/all.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class Pending : public Heuristic {
 public:
  Pending(std::string name, std::string title, std::string description,
          std::vector<ExperimentNeed> needs)
      : name_(std::move(name)),
        title_(std::move(title)),
        description_(std::move(description)),
        needs_(std::move(needs)) {}
  std::string name() const override { return name_; }
  std::string title() const override { return title_; }
  std::string description() const override { return description_; }
  std::vector<ExperimentNeed> needs() const override { return needs_; }
  std::map<std::string, double> defaults() const override { return {}; }
  NodeResult evaluate(const Context&, nlohmann::json&) const override {
    return not_evaluated("heuristic '" + name_ + "' is not implemented in this version of sonde");
  }

 private:
  std::string name_, title_, description_;
  std::vector<ExperimentNeed> needs_;
};

}  // namespace

std::unique_ptr<Heuristic> make_database_congestion() {
  return std::make_unique<Pending>(
      "database_congestion", "Database Congestion",
      "The database is overloaded: its CPU is saturated or lock waits per lock grow with load.",
      std::vector<ExperimentNeed>{{"scaling", "scaling", 5, {"cpu", "database_statistics"}}});
}
std::unique_ptr<Heuristic> make_the_blob() {
  return std::make_unique<Pending>("the_blob", "The Blob",
                                   "One component takes part in most of the messaging.",
                                   std::vector<ExperimentNeed>{{"load", "", 1, {"messaging"}}});
}
std::unique_ptr<Heuristic> make_empty_semi_trucks() {
  return std::make_unique<Pending>(
      "empty_semi_trucks", "Empty Semi Trucks",
      "Many small messages are sent in a loop where one larger message would do.",
      std::vector<ExperimentNeed>{{"single_user", "", 1, {"trace", "messaging"}}});
}

}  // namespace sonde::diagnose::heuristics
