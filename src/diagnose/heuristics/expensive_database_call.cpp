// Expensive Database Call (thesis H9, Eq. 6.26): a statement whose share of
// the service time exceeds tau under load and grows from the single-user
// test to the load test. The share is the statement's total time over the
// total response time of all requests of the experiment (requests are not
// yet attributed to services; see docs/diagnose/heuristics.md).
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/heuristics/sql_shape.hpp"

namespace sonde::diagnose::heuristics {
namespace {

std::map<std::string, double> shares(const Experiment& e, const LogRecords& recs) {
  double total_rt = 0;
  for (double v : e.response_times()) total_rt += v;
  std::map<std::string, double> out;
  if (total_rt <= 0) return out;
  for (const LogRecord& r : recs.records) {
    out[sql_shape(r.text("sqlStatement"))] += std::max(0.0, r.number("duration")) / 1e6 / total_rt;
  }
  return out;
}

class ExpensiveDatabaseCall : public Heuristic {
 public:
  std::string name() const override { return "expensive_database_call"; }
  std::string title() const override { return "Expensive Database Call"; }
  std::string description() const override {
    return "One query takes a large and growing part of the response time under load "
           "(full table scan, temporary tables, missing index).";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"single_user", "", 1, {"response_time", "database"}},
            {"load", "", 1, {"response_time", "database"}}};
  }
  std::map<std::string, double> defaults() const override {
    // tau: no thesis value; 0.2 = the query takes a fifth of the response time.
    return {{"min_share", 0.2}};
  }

  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    const Experiment* single = ctx.data.single_user_test();
    const Experiment* load = ctx.data.max_load_test();
    if (single == nullptr || load == nullptr)
      return not_evaluated("needs a single-user test and a load test");
    for (const Experiment* e : {single, load}) {
      if (!e->has_probe("database"))
        return not_evaluated("experiment '" + e->id + "' ran without the database probe");
    }
    const LogRecords& rs = log_records(*single, "sonde.record.DatabaseCall");
    const LogRecords& rl = log_records(*load, "sonde.record.DatabaseCall");
    if (!rs.error.empty()) return not_evaluated(rs.error);
    if (!rl.error.empty()) return not_evaluated(rl.error);
    const std::map<std::string, double> s = shares(*single, rs);
    const std::map<std::string, double> h = shares(*load, rl);
    NodeResult r;
    for (const auto& [shape, share_h] : h) {
      auto it = s.find(shape);
      const double share_s = it == s.end() ? 0 : it->second;
      if (!(share_h > ctx.params.at("min_share") && share_h > share_s)) continue;
      Evidence ev;
      ev.location = shape;
      ev.test =
          "share of response time > " + fmt(ctx.params.at("min_share")) + " and growing with load";
      ev.effect_size = share_h;
      ev.effect = "share of the response time under load";
      ev.data = "'" + single->id + "' (" + std::to_string(rs.records.size()) + " calls) vs '" +
                load->id + "' (" + std::to_string(rl.records.size()) + " calls)";
      ev.detail = "This query takes " + fmt(share_s * 100) +
                  "% of the response time with one user and " + fmt(share_h * 100) + "% with " +
                  std::to_string(load->users) + " users";
      ev.values = {{"share_single_user", share_s}, {"share_load", share_h}};
      r.evidence.push_back(std::move(ev));
    }
    r.status = r.evidence.empty() ? Status::kNotDetected : Status::kDetected;
    r.reason = r.evidence.empty() ? "no query dominates the response time under load"
                                  : std::to_string(r.evidence.size()) +
                                        " query(ies) dominate the response time under load";
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_expensive_database_call() {
  return std::make_unique<ExpensiveDatabaseCall>();
}

}  // namespace sonde::diagnose::heuristics
