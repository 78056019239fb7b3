// Database One Lane Bridge: a statement's database time grows
// significantly into every violating load (DatabaseCall records, per SQL
// statement) while the CPU is not saturated; a saturated CPU would explain
// the growth, which is Database Congestion's business instead.
#include <algorithm>

#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/growth_with_load.hpp"
#include "stats/erlang.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class DatabaseOlb : public Heuristic {
 public:
  std::string name() const override { return "database_olb"; }
  std::string title() const override { return "Database One Lane Bridge"; }
  std::string description() const override {
    return "Database calls get slower with load although the CPU is not saturated: they wait "
           "for each other in the database (row/table locks, a single connection).";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"scaling", "scaling", 5, {"response_time", "database", "cpu"}}};
  }
  std::map<std::string, double> defaults() const override {
    // Saturation: the utilization at which M/M/c response time doubles.
    // A growth below 10% per step does not count (the thesis: any
    // significant one): a table that grows during the run slows its scans
    // a little at every step (demo: a search over order_line +6% per step).
    return {{"min_relative_increase", 0.1}, {"saturation_rt_factor", 2}};
  }
  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    NodeResult r;
    const std::vector<std::string> grown = growth_with_load(
        ctx, {"sonde.record.DatabaseCall", "database", "duration", "sqlStatement", "SQL", "", true},
        r);
    if (grown.empty()) return r;
    const std::vector<const Experiment*> steps = ctx.data.series("scaling");
    double u = 0;
    int cores = 0;
    std::string error;
    if (!cpu_utilization(*steps.back(), &u, &cores, &error)) {
      return not_evaluated("database time grows with load, but saturation cannot be ruled out: " +
                           error);
    }
    const double limit = stats::utilization_for_rt_factor(ctx.params.at("saturation_rt_factor"),
                                                          servers_for(ctx, cores));
    if (u >= limit) {
      r.status = Status::kNotDetected;
      r.reason = "database time grows, but the CPU is saturated (" + fmt(u * 100) +
                 "% >= " + fmt(limit * 100) + "%): congestion, not a one lane bridge";
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_database_olb() { return std::make_unique<DatabaseOlb>(); }

}  // namespace sonde::diagnose::heuristics
